/**
 * The one verdict on a confined run, owned by the sandbox floor so the floors above never branch
 * on backend names: a spawn failure at a confinement stage (the supervisor's launcher, a
 * namespace, caps, Landlock, seccomp, or the wrapper refusing to build the sandbox) is the
 * sandbox's — SANDBOX_UNAVAILABLE, nothing ran — and a finished run's denial facts come from
 * the tools' refusal messages and the plan's writable set (src/sandbox/denials/classify.ts).
 */
import { errnoName, isConfinementStage, isSpawnError, SandboxUnavailableError } from '../policy/errors.js'
import type { SandboxBackendName } from '../policy/backends.js'
import { REMEDY_RUNNER_FAILED } from '../policy/remedies.js'
import type { NetworkFacts } from '../policy/network/facts.js'
import type { SandboxEnforcement, SandboxMode } from '../policy/vocabulary.js'
import { LANDLOCK_VIEW } from './confinement/denial-text.js'
import { classifyDenial } from './denials/classify.js'
import type { ConfinementPlan } from './confinement/plan.js'
import type { ClosedClassFact } from '../policy/vocabulary.js'
import { type ClosingPlan, closedClassesMet } from './closed-classes/met.js'

/** The sandbox facts of one run, in the shell seam's shape. */
export interface RunVerdict {
  mode: SandboxMode
  denied: boolean
  enforcement?: SandboxEnforcement
  runnerFailed?: boolean
  backend?: string
  deniedPaths?: string[]
  network?: NetworkFacts
  deniedFor?: Array<'files' | 'network'>
  refusedPaths?: string[]
  refusalSource?: 'messages' | 'audit'
  closedClasses?: ClosedClassFact[]
  removedEnv?: string[]
}

/** Whether `error` is a spawn failure at a confinement stage: the sandbox failed, not the command. */
export function isRunnerFailure(error: unknown): boolean {
  return isSpawnError(error) && isConfinementStage(error.stage)
}

/** The error to surface for a spawn failure under `mode`: SandboxUnavailableError for a runner failure, `error` itself otherwise. */
export function runnerFailureToError<E>(error: E, mode: SandboxMode): SandboxUnavailableError | E {
  if (!isSpawnError(error) || !isConfinementStage(error.stage)) return error
  return new SandboxUnavailableError(mode, {
    reason:
      error.stage === 'launcher'
        ? `the sandbox runner could not start the command${error.detail ? ` (${error.detail})` : ` (${errnoName(error.errno)})`}`
        : `the sandbox runner failed to confine the command at ${error.stage} (${errnoName(error.errno)}${error.detail ? `: ${error.detail}` : ''})`,
    remedy: REMEDY_RUNNER_FAILED,
    // The wrapper's own words when it refused (bwrap's line); else the stage and errno.
    detail:
      error.stage === 'launcher' && error.detail !== undefined
        ? error.detail
        : { stage: error.stage, errno: error.errno },
    cause: error,
  })
}

/** What a run's verdict reads of its plan: every backend's plan (Seatbelt's too) has these. */
export interface VerdictPlan
  extends Pick<ConfinementPlan, 'policy' | 'account' | 'writable'>,
    Pick<ClosingPlan, 'seccomp'> {
  backend: SandboxBackendName
  /** The hidden paths the plan saw (a refusal there is a read's). */
  shield?: { hidden: readonly string[] } | undefined
  /** bubblewrap: the protected paths bound read-only inside writable roots, and the session's /dev/shm. */
  mounts?: { protected: { paths: ReadonlyArray<{ path: string }> }; shm?: string | undefined } | undefined
  /** Landlock: the writable paths of a read-only view of the host (its denials read EROFS). */
  namespaces?: { view?: readonly string[] | undefined } | undefined
  /** The workspace owner the command ran as, when not the host's user. */
  runAs?: { uid: number; gid: number } | undefined
}

/**
 * The facts of a finished (or failed) confined run under `plan`: a pure function of its input (it
 * reads the host only to judge a denial's path; it changes nothing). What appeared where it must
 * not is taken away once, by the runtime when the run's tree is gone (`run.refused`).
 */
export function runVerdict(
  plan: VerdictPlan,
  run: {
    exitCode: number | null
    stderr: string
    /** The stdout tail (some tools print their errors there). */
    stdout?: string | undefined
    cwd: string
    command?: string | undefined
    runnerFailed?: boolean
    /** Where each failed command of the run's shell ran (see src/shell/failure-log.ts). */
    failures?: ReadonlyArray<{ cwd: string; command: string }> | undefined
    /** What the runtime took away once the tree was gone (SubprocessHandle.refusedPaths; src/subprocess/process/must-not-appear.ts). */
    refused?: readonly string[] | undefined
    /** What a network allow-list's proxy saw of the run (SubprocessHandle.network). */
    network?: NetworkFacts | undefined
  },
): RunVerdict {
  const runnerFailed = run.runnerFailed === true
  const appeared = run.refused ?? []
  const classified = classifyDenial({
    // A read-only view's mounts refuse with EROFS before Landlock does.
    backend: plan.backend === 'landlock' && plan.namespaces?.view !== undefined ? LANDLOCK_VIEW : plan.backend,
    exitCode: run.exitCode,
    runnerFailed,
    stderr: run.stderr,
    stdout: run.stdout,
    cwd: run.cwd,
    command: run.command,
    failures: run.failures,
    // Read only when a denial is there to judge (the hidden set is listed on first use).
    get hidden() {
      return plan.shield?.hidden
    },
    protectedPaths: plan.mounts?.protected.paths.map((p) => p.path),
    commandUser: commandUserOf(plan),
    writable: plan.writable,
  })
  const deniedPaths = [...new Set([...classified.deniedPaths, ...appeared])]
  // What the sandbox refused whatever the exit: a run that exits 0 can have lost a write.
  const refusedPaths = [...new Set([...classified.refusedPaths, ...appeared])]
  const files = classified.denied || appeared.length > 0
  // A refusal is the sandbox's fact; it is a denial of the run only when the run then failed.
  const network = (run.network?.refused.length ?? 0) > 0 && run.exitCode !== 0 && !runnerFailed
  const verdict: RunVerdict = {
    mode: plan.policy.mode,
    denied: files || network,
    backend: plan.backend,
    enforcement: plan.account.enforcement,
  }
  if (runnerFailed) verdict.runnerFailed = true
  if (deniedPaths.length > 0) verdict.deniedPaths = deniedPaths
  if (refusedPaths.length > 0) {
    verdict.refusedPaths = refusedPaths
    verdict.refusalSource = 'messages'
  }
  if (run.network) verdict.network = run.network
  if (files || network)
    verdict.deniedFor = [...(files ? ['files' as const] : []), ...(network ? ['network' as const] : [])]
  const closed = closedClassesMet(plan, run)
  if (closed.length > 0) verdict.closedClasses = closed
  return verdict
}

/**
 * Whom a confined command's permission checks were for, when not the host process's: the
 * workspace owner it ran as, or a root host's command, which ran without any capability.
 */
function commandUserOf(plan: VerdictPlan): { uid: number; gids: readonly number[] } | undefined {
  if (plan.runAs) return { uid: plan.runAs.uid, gids: [plan.runAs.gid] }
  const uid = process.getuid?.()
  if (uid !== 0) return undefined
  return { uid: 0, gids: [...new Set([process.getgid?.() ?? 0, ...(process.getgroups?.() ?? [])])] }
}
