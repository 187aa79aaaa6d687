/**
 * Backend choice: from the probe's verdicts and one policy, the backend that runs it and the
 * enforcement it gets. The first backend of the chain that enforces the policy `full` wins, else
 * the first usable `partial` one (unless the policy demands `full`), else SANDBOX_UNAVAILABLE.
 *
 * The chain is the platform's: Linux offers landlock then bubblewrap, macOS offers seatbelt
 * (always `partial`: no subreaper, no resource limits in SBPL), any other platform nothing.
 */
import {
  type BackendCapability,
  type EnforcementAccount,
  SANDBOX_BACKENDS,
  type SandboxBackendName,
  type SandboxCapabilities,
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

/** The default backend chain of `platform`, in preference order (empty where cordon has none). */
export function defaultChain(platform: NodeJS.Platform = process.platform): SandboxBackendName[] {
  if (platform === 'linux') return [...SANDBOX_BACKENDS]
  if (platform === 'darwin') return ['seatbelt']
  return []
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
      ? `no sandbox backend is configured for this platform (${capabilities.platform})`
      : partial
        ? `the policy requires full enforcement and no backend gives it (${why.join('; ')})`
        : `no sandbox backend is usable on this host (${why.join('; ')})`
  throw new SandboxUnavailableError(policy.mode, {
    reason,
    ...(remedies.length > 0 ? { remedy: [...new Set(remedies)].join(' ') } : {}),
  })
}
