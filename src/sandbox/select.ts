/**
 * Backend choice: from the probe's verdicts and one policy, the backend that runs it and the
 * enforcement it gets. The first backend of the chain that enforces the policy `full` wins, else
 * the first usable `partial` one (unless the policy demands `full`), else SANDBOX_UNAVAILABLE.
 */
import type {
  BackendCapability,
  EnforcementAccount,
  SandboxBackendName,
  SandboxCapabilities,
} from '../policy/backends.js'
import { SandboxUnavailableError } from '../policy/errors.js'
import type { SandboxEnforcement, SandboxPolicy } from '../policy/vocabulary.js'

/** The backend chosen for one policy, and how completely it enforces it. */
export interface BackendChoice {
  backend: SandboxBackendName
  enforcement: SandboxEnforcement
  account: EnforcementAccount
  capability: BackendCapability
}

/** The account a usable backend gives one policy (from the probe's facts). */
export type AccountOf = (backend: SandboxBackendName, capability: BackendCapability) => EnforcementAccount

/** Picks the backend for `policy`; throws SandboxUnavailableError (with why and a remedy) when none fits. */
export function selectBackend(
  capabilities: SandboxCapabilities,
  policy: SandboxPolicy,
  accountOf: AccountOf,
): BackendChoice {
  let partial: BackendChoice | undefined
  const why: string[] = []
  const remedies: string[] = []
  for (const name of capabilities.chain) {
    const capability = capabilities.backends[name]
    if (!capability?.usable) {
      why.push(`${name}: ${capability?.reason ?? 'not probed'}`)
      if (capability?.remedy) remedies.push(capability.remedy)
      continue
    }
    const account = accountOf(name, capability)
    const choice = { backend: name, enforcement: account.enforcement, account, capability }
    if (account.enforcement === 'full') return choice
    partial ??= choice
    why.push(
      `${name}: ${account.ungoverned.map((c) => `${c} (${account.classes[c]?.how ?? 'not governed'})`).join(', ')}`,
    )
    if (capability.remedy) remedies.push(capability.remedy)
  }
  if (partial && policy.requireEnforcement !== 'full') return partial
  const reason =
    capabilities.chain.length === 0
      ? 'no sandbox backend is configured for this platform'
      : partial
        ? `the policy requires full enforcement and no backend gives it (${why.join('; ')})`
        : `no sandbox backend is usable on this host (${why.join('; ')})`
  throw new SandboxUnavailableError(policy.mode, {
    reason,
    ...(remedies.length > 0 ? { remedy: [...new Set(remedies)].join(' ') } : {}),
  })
}
