/** The Landlock backend as the table of backends sees it (src/sandbox/backend.ts). */
import type { BackendCapability } from '../../policy/backends.js'
import { cutsNetwork, type SandboxPolicy } from '../../policy/vocabulary.js'
import type { SpawnPathChoice } from '../../subprocess/portable/spawn-path.js'
import type { SubprocessSpawnSpec } from '../../subprocess/types.js'
import type { BackendFacts, ShieldFacts } from '../confinement/account.js'
import { hostBounds } from '../confinement/bounds.js'
import { requestHost } from '../confinement/host.js'
import type { ConfinementPlan } from '../confinement/plan.js'
import type { ConfineHost, PlanRequest } from '../confinement/request.js'
import { commandAsOwner } from '../confinement/run-as.js'
import { KNOWN_ABI } from '../ruleset/landlock.js'
import { landlockAccount } from './account.js'
import { landlockPlan } from './plan.js'
import { LANDLOCK_LIMITATIONS, probeLandlock, REMEDY_BUILD_HELPER } from './probe.js'
import { landlockSpec } from './spec.js'

/** What the probe found, as Landlock's account reads it for `policy`. */
function landlockFacts(capability: BackendCapability, policy: SandboxPolicy): BackendFacts {
  const uid0 = (process.getuid?.() ?? 0) === 0
  const ns = capability.namespaces
  const deny = cutsNetwork(policy.network)
  return {
    abi: Math.min(capability.abi ?? 0, KNOWN_ABI),
    seccomp: capability.seccomp === true,
    supervisor: capability.supervisor === true,
    namespaces: {
      ipc: ns?.ipc === true && (uid0 || deny),
      net: ns?.net === true && deny,
      keys: uid0 && ns?.ipc === true,
    },
    uid0,
    bounds: hostBounds(),
  }
}

/** The Landlock verdict on the portable spawn path: unusable, and why. */
export function landlockOnPortable(spawnPath: SpawnPathChoice): BackendCapability {
  return {
    backend: 'landlock',
    usable: false,
    reason: `the portable spawn path is in use (${spawnPath.reason}): Landlock confines the native child between clone and exec, which node:child_process cannot do`,
    remedy: spawnPath.forced
      ? 'Unset CORDON_SPAWN (or ask for the native spawn path) to use Landlock.'
      : REMEDY_BUILD_HELPER,
    limitations: [...LANDLOCK_LIMITATIONS],
    probeMs: 0,
  }
}

/** Landlock: the host builds the command's ruleset; the command confines itself below a supervisor. */
export const landlockBackend = {
  name: 'landlock',
  privateShm: false,
  keepsHostProgramsReadOnly: false,
  plansWithAddon: true,
  viewCheck: 'epoch',
  linux: true,
  rulesetInside: false,
  terminal: { handsRuleset: true, hostChild: true, argv: (_plan: ConfinementPlan, launcher: string[]) => launcher },
  account: (policy: SandboxPolicy, capability: BackendCapability, shield: ShieldFacts | undefined) =>
    landlockAccount(landlockFacts(capability, policy), { ...policy, shield }),
  plan(request: PlanRequest): ConfinementPlan {
    const cap = request.capability
    const host = requestHost(request.native, cap, cap.namespaces?.net === true)
    const { policy, grants, snapshot, shield, env, runAs } = request
    const plan = landlockPlan(policy, grants, host, snapshot, shield, env)
    return runAs ? commandAsOwner(plan, runAs) : plan
  },
  confine: (spec: SubprocessSpawnSpec, plan: ConfinementPlan, host: ConfineHost) =>
    landlockSpec(spec, plan, host.ruleset(plan)),
  probe: (options: { spawnPath: SpawnPathChoice }) =>
    options.spawnPath.path === 'native' ? probeLandlock() : Promise.resolve(landlockOnPortable(options.spawnPath)),
} as const
