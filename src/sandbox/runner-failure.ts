/**
 * Runner failures: a confinement step (caps, no_new_privs, landlock, seccomp) that failed in the
 * child before exec means the sandbox could not be applied, so the run surfaces as
 * SANDBOX_UNAVAILABLE with the stage and errno as its detail. `chdir`/`exec` failures are the
 * command's own and stay ordinary SpawnErrors — except under bubblewrap, where the program the
 * native child execs is `bwrap` itself, so an `exec` failure means the runner is missing.
 *
 * bubblewrap reports its own refusals as text: it exits 1 after printing one `bwrap: ...` line
 * before the command ever ran (namespace creation refused, a mount that failed). That line,
 * first on stderr, is the runner failure; `bwrap: execvp ...` is the command not being found,
 * which stays the command's own failure. (A command that itself runs a nested bwrap that fails
 * as its first output would look the same: the fact is as good as that text.)
 */
import { errnoName, isConfinementStage, isSpawnError, SandboxUnavailableError } from '../policy/errors.js'
import type { SandboxMode } from '../policy/vocabulary.js'

/** Whether `error` is a SpawnError from a confinement stage (or, under bubblewrap, from exec'ing bwrap). */
export function isRunnerFailure(error: unknown, backend?: string): boolean {
  return (
    isSpawnError(error) && (isConfinementStage(error.stage) || (backend === 'bubblewrap' && error.stage === 'exec'))
  )
}

/** The error to surface for a spawn failure under `mode`: SandboxUnavailableError for a runner failure, `error` itself otherwise. */
export function runnerFailureToError<E>(
  error: E,
  mode: SandboxMode,
  backend = 'landlock',
): SandboxUnavailableError | E {
  if (!isSpawnError(error) || !isRunnerFailure(error, backend)) return error
  return new SandboxUnavailableError(mode, {
    reason:
      error.stage === 'exec'
        ? `the ${backend} runner could not be started (${errnoName(error.errno)}${error.path ? ` on ${error.path}` : ''})`
        : `the ${backend} runner failed to confine the command at ${error.stage} (${errnoName(error.errno)})`,
    remedy:
      'Nothing was run. Re-probe the host (LocalSandbox.create) to see which backend still works, or choose danger-full-access.',
    detail: { stage: error.stage, errno: error.errno },
    cause: error,
  })
}

/** bwrap's own fatal line when it refused to build the sandbox (exit 1, first stderr line `bwrap: `), else undefined. */
export function bwrapRunnerFailure(exitCode: number | null, stderr: string): string | undefined {
  if (exitCode !== 1) return undefined
  const first = stderr.split(/\r?\n/).find((line) => line.trim() !== '')
  if (first === undefined || !first.startsWith('bwrap: ') || first.startsWith('bwrap: execvp ')) return undefined
  return first
}

/** The SANDBOX_UNAVAILABLE error for bwrap's own refusal (`line` from bwrapRunnerFailure): nothing was run. */
export function bwrapFailureToError(line: string, mode: SandboxMode): SandboxUnavailableError {
  return new SandboxUnavailableError(mode, {
    reason: 'bubblewrap refused to build the sandbox',
    remedy:
      'Nothing was run. Re-probe the host (LocalSandbox.create) to see which backend still works, or choose danger-full-access.',
    detail: line,
  })
}
