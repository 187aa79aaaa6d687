/** The Seatbelt backend as the table of backends sees it (src/sandbox/backend.ts). */
import type { BackendCapability } from '../../policy/backends.js'
import { grantsFor } from '../../policy/grants.js'
import type { SandboxPolicy } from '../../policy/vocabulary.js'
import { recordedProgramProblem } from '../../subprocess/trusted-program.js'
import type { SubprocessSpawnSpec } from '../../subprocess/types.js'
import type { ConfineHost, PlanRequest } from '../confinement/request.js'
import { viewPlaces } from '../view/places.js'
import type { ProtectedSet } from '../view/protected-paths.js'
import { ReadView, type ReadViewSnapshot } from '../view/read-view.js'
import { seatbeltAccount, type SeatbeltPlan, seatbeltPlan, seatbeltSpec } from './plan.js'
import { probeSeatbelt } from './probe.js'
import { renderSeatbeltProfile } from './profile.js'
import { SANDBOX_EXEC } from './launch.js'
import { SandboxUnavailableError } from '../../policy/errors.js'

/** Seatbelt denies by path: the policy's own, what of the hidden set exists now, and every exact place. */
function seatbeltHidden(own: readonly string[], view: ReadView, snapshot: ReadViewSnapshot): string[] {
  return [...new Set([...own, ...snapshot.hidden, ...view.exactPlaces()])]
}

/**
 * Seatbelt denies writes by path, whether the path exists or not: the policy's own protected
 * paths, the protected set that exists, and what must not appear (refused before it can).
 */
function seatbeltProtected(own: readonly string[], set: ProtectedSet): string[] {
  return [...new Set([...own, ...set.paths.map((p) => p.path), ...(set.mustNotAppear ?? [])])]
}

/**
 * The paths a Seatbelt profile for `policy` denies besides the policy's own hiddenPaths (the
 * default hidden set and cordon's private dir, expanded from `env`): what `cordon explain
 * --backend seatbelt` renders with, so that it shows the profile a run would get.
 */
export function seatbeltHiddenSet(policy: SandboxPolicy, env: NodeJS.ProcessEnv = process.env): string[] {
  const view = new ReadView(viewPlaces(policy, env, undefined))
  try {
    return seatbeltHidden([], view, view.current())
  } finally {
    view.close()
  }
}

/**
 * Why /usr/bin/sandbox-exec may not be run now: not the file the probe checked (its identity is
 * recorded), or, on macOS with a verdict that recorded none, no longer trusted. Off macOS a
 * verdict without identity (a caller's, or a test's) is planned as is: nothing is run here.
 */
export function sandboxExecProblem(capability: BackendCapability | undefined): string | undefined {
  const recorded = capability?.executable === SANDBOX_EXEC ? capability.executableIdentity : undefined
  if (recorded === undefined && process.platform !== 'darwin') return undefined
  return recordedProgramProblem(SANDBOX_EXEC, recorded)
}

/** Seatbelt (macOS): sandbox-exec with a profile rendered from the grants. */
export const seatbeltBackend = {
  name: 'seatbelt',
  privateShm: false,
  keepsHostProgramsReadOnly: true,
  plansWithAddon: false,
  viewCheck: 'none',
  linux: false,
  rulesetInside: false,
  account: (policy: SandboxPolicy, capability: BackendCapability) =>
    seatbeltAccount(policy, renderSeatbeltProfile(grantsFor(policy)), capability.verified === true),
  // Seatbelt denies by path: the default hidden set goes in as paths (what exists now, and every
  // exact place whether it exists or not), with cordon's private dir; the protected set likewise.
  plan: ({ policy, grants, view, snapshot, session, capability, protectedSet }: PlanRequest): SeatbeltPlan =>
    seatbeltPlan(
      policy,
      {
        ...grants,
        hiddenPaths: seatbeltHidden(grants.hiddenPaths, view, snapshot),
        protectedPaths: seatbeltProtected(grants.protectedPaths, protectedSet),
      },
      { tempDir: session.tmp, verified: capability.verified },
    ),
  confine(spec: SubprocessSpawnSpec, plan: SeatbeltPlan, host: ConfineHost): SubprocessSpawnSpec {
    const problem = sandboxExecProblem(host.capabilities.backends.seatbelt)
    if (problem !== undefined) throw new SandboxUnavailableError(plan.policy.mode, { reason: problem })
    return seatbeltSpec(spec, plan)
  },
  probe: () => probeSeatbelt(),
} as const
