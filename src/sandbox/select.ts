/**
 * Backend choice: from the probe's verdicts and one policy, the backend that runs it and the
 * enforcement it gets. The first backend of the chain that enforces the policy `full` wins, else
 * the first usable `partial` one (unless the policy demands `full`), else SANDBOX_UNAVAILABLE.
 */
import { SandboxUnavailableError } from '../policy/errors.js'
import type { SandboxEnforcement, SandboxPolicy } from '../policy/vocabulary.js'
import type { BackendCapability, SandboxBackendName, SandboxCapabilities } from './probe.js'

/** The backend chosen for one policy, and how completely it enforces it. */
export interface BackendChoice {
  backend: SandboxBackendName
  enforcement: SandboxEnforcement
  capability: BackendCapability
}

/** The enforcement `capability` gives `policy`, or undefined when the backend is unusable. */
export function enforcementFor(
  capability: BackendCapability | undefined,
  policy: SandboxPolicy,
): SandboxEnforcement | undefined {
  if (!capability?.usable || !capability.enforcement) return undefined
  return capability.enforcement[policy.mode][policy.network === 'deny' ? 'deny' : 'inherit']
}

/** Picks the backend for `policy`; throws SandboxUnavailableError (with why and a remedy) when none fits. */
export function selectBackend(capabilities: SandboxCapabilities, policy: SandboxPolicy): BackendChoice {
  let partial: BackendChoice | undefined
  const why: string[] = []
  const remedies: string[] = []
  for (const name of capabilities.chain) {
    const capability = capabilities.backends[name]
    const enforcement = enforcementFor(capability, policy)
    if (!capability || enforcement === undefined) {
      why.push(`${name}: ${capability?.reason ?? 'not probed'}`)
      if (capability?.remedy) remedies.push(capability.remedy)
      continue
    }
    if (enforcement === 'full') return { backend: name, enforcement, capability }
    partial ??= { backend: name, enforcement, capability }
    why.push(`${name}: enforces ${policy.mode}${policy.network === 'deny' ? ' with network deny' : ''} only partially`)
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
