/** A usable backend's accounts for every confined mode and network, as its capability reports them. */
import type { BackendCapability, EnforcementAccount } from '../../policy/backends.js'
import type { ConfinedSandboxMode, EffectClass, SandboxEnforcement } from '../../policy/vocabulary.js'

const MODES = ['read-only', 'workspace-write'] as const

/** Accounts for every mode and network, for the capability. */
export function accountsFor(
  account: (mode: ConfinedSandboxMode, network: 'inherit' | 'deny') => EnforcementAccount,
): Pick<BackendCapability, 'accounts' | 'enforcement' | 'governs'> {
  const accounts = Object.fromEntries(
    MODES.map((m) => [m, { inherit: account(m, 'inherit'), deny: account(m, 'deny') }]),
  ) as Record<ConfinedSandboxMode, { inherit: EnforcementAccount; deny: EnforcementAccount }>
  const enforcement = Object.fromEntries(
    MODES.map((m) => [m, { inherit: accounts[m].inherit.enforcement, deny: accounts[m].deny.enforcement }]),
  ) as Record<ConfinedSandboxMode, { inherit: SandboxEnforcement; deny: SandboxEnforcement }>
  const governs = Object.fromEntries(MODES.map((m) => [m, accounts[m].deny.governed])) as Record<
    ConfinedSandboxMode,
    EffectClass[]
  >
  return { accounts, enforcement, governs }
}
