/** The bubblewrap backend as the table of backends sees it (src/sandbox/backend.ts). */
import fs from 'node:fs'
import type { BackendCapability } from '../../policy/backends.js'
import { SandboxUnavailableError } from '../../policy/errors.js'
import { cutsNetwork, type SandboxPolicy } from '../../policy/vocabulary.js'
import { helperMissingReason, helperPath } from '../../subprocess/native.js'
import type { SubprocessSpawnSpec } from '../../subprocess/types.js'
import type { BackendFacts, ShieldFacts } from '../confinement/account.js'
import { hostBounds } from '../confinement/bounds.js'
import { requestHost } from '../confinement/host.js'
import type { ConfinementPlan } from '../confinement/plan.js'
import type { ConfineHost, PlanRequest } from '../confinement/request.js'
import { wrapperAsOwner } from '../confinement/run-as.js'
import { statPath } from '../ruleset/landlock.js'
import { bubblewrapAccount } from './account.js'
import { bubblewrapMounts } from './mounts.js'
import { bubblewrapPlan } from './plan.js'
import { releaseResident } from './resident.js'
import { probeBubblewrap } from './probe.js'
import { bwrapProblem, type HostPrograms } from './program.js'
import { bubblewrapSpec } from './spec.js'
import { bubblewrapTerminalArgv } from './terminal.js'

/** What the probe found, as bubblewrap's account reads it for `policy`. */
function bubblewrapFacts(capability: BackendCapability, policy: SandboxPolicy): BackendFacts {
  return {
    abi: capability.abi ?? 0,
    seccomp: capability.seccomp === true,
    supervisor: capability.supervisor === true,
    namespaces: { ipc: true, net: cutsNetwork(policy.network) },
    uid0: (process.getuid?.() ?? 0) === 0,
    bounds: hostBounds(),
  }
}

function isSetuid(executable: string | undefined): boolean {
  if (executable === undefined) return false
  try {
    return (fs.statSync(executable).mode & 0o4000) !== 0
  } catch {
    return false
  }
}

/**
 * bwrap as the probe recorded it (still the file it checked, still trusted) and a trusted
 * cordon-exec; SANDBOX_UNAVAILABLE with the reason when either is missing, replaced or refused.
 */
function wrapperTools(host: ConfineHost, plan: ConfinementPlan): { bwrap: string; helper: string } {
  const cap = host.capabilities.backends.bubblewrap
  const problem = cap ? bwrapProblem(cap) : 'the probe recorded no bwrap executable'
  if (problem !== undefined) throw new SandboxUnavailableError(plan.policy.mode, { reason: problem })
  const helper = helperPath()
  if (helper === undefined) throw new SandboxUnavailableError(plan.policy.mode, { reason: helperMissingReason() })
  return { bwrap: cap?.executable as string, helper }
}

/** bubblewrap: bwrap's namespaces and mounts around cordon-exec init, which adds Landlock writes and seccomp. */
export const bubblewrapBackend = {
  name: 'bubblewrap',
  privateShm: true,
  keepsHostProgramsReadOnly: true,
  plansWithAddon: false,
  viewCheck: 'listing',
  linux: true,
  rulesetInside: true,
  terminal: { handsRuleset: false, hostChild: false, argv: bubblewrapTerminalArgv },
  account: (policy: SandboxPolicy, capability: BackendCapability, shield: ShieldFacts | undefined) =>
    bubblewrapAccount(bubblewrapFacts(capability, policy), { ...policy, shield }),
  plan(request: PlanRequest): ConfinementPlan {
    const cap = request.capability
    const host = requestHost(request.native, cap, false)
    const { policy, grants, snapshot, shield, env, runAs } = request
    const plan = bubblewrapPlan(
      policy,
      grants,
      host,
      { setuid: isSetuid(cap.executable), hostDevpts: statPath('/dev/pts')?.dev },
      { viewEpoch: snapshot.epoch, mounts: bubblewrapMounts(request), shield, env },
    )
    return runAs ? wrapperAsOwner(plan, runAs) : plan
  },
  confine: (spec: SubprocessSpawnSpec, plan: ConfinementPlan, host: ConfineHost) =>
    bubblewrapSpec(spec, plan, host.ruleset(plan), { ...wrapperTools(host, plan), resident: host.resident !== false }),
  probe: (options: { programs?: HostPrograms | undefined }) => probeBubblewrap({ bwrap: options.programs?.bwrap }),
  release: (plan: ConfinementPlan) => releaseResident(plan),
} as const
