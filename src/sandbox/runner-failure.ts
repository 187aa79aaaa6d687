/**
 * Runner failures: a confinement step (caps, no_new_privs, landlock, seccomp) that failed in the
 * child before exec means the sandbox could not be applied, so the run surfaces as
 * SANDBOX_UNAVAILABLE with the stage and errno as its detail. `chdir`/`exec` failures are the
 * command's own and stay ordinary SpawnErrors.
 */
import { errnoName, isConfinementStage, isSpawnError, SandboxUnavailableError } from '../policy/errors.js'
import type { SandboxMode } from '../policy/vocabulary.js'

/** Whether `error` is a SpawnError from a confinement stage. */
export function isRunnerFailure(error: unknown): boolean {
  return isSpawnError(error) && isConfinementStage(error.stage)
}

/** The error to surface for a spawn failure under `mode`: SandboxUnavailableError for a runner failure, `error` itself otherwise. */
export function runnerFailureToError<E>(error: E, mode: SandboxMode, backend = 'landlock'): SandboxUnavailableError | E {
  if (!isSpawnError(error) || !isConfinementStage(error.stage)) return error
  return new SandboxUnavailableError(mode, {
    reason: `the ${backend} runner failed to confine the command at ${error.stage} (${errnoName(error.errno)})`,
    remedy:
      'Nothing was run. Re-probe the host (LocalSandbox.create) to see which backend still works, or choose danger-full-access.',
    detail: { stage: error.stage, errno: error.errno },
    cause: error,
  })
}
