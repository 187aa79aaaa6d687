/**
 * A confined run needs its session's private dirs (TMPDIR, spill, shm) before anything runs. When
 * cordon cannot make them (a full disk, a read-only parent, no fit candidate) the run is refused
 * as SANDBOX_UNAVAILABLE, naming why: it never runs without them, and never unconfined.
 */
import { isSandboxUnavailableError, SandboxUnavailableError } from '../../policy/errors.js'
import { REMEDY_PRIVATE_DIR } from '../../policy/remedies.js'
import type { SandboxMode } from '../../policy/vocabulary.js'

/** `make()`'s private dirs, or SANDBOX_UNAVAILABLE for `mode` naming why they cannot be made. */
export function withPrivateDirs<T>(mode: SandboxMode, make: () => T): T {
  try {
    return make()
  } catch (error) {
    if (isSandboxUnavailableError(error)) throw error
    const why = error instanceof Error ? error.message : String(error)
    throw new SandboxUnavailableError(mode, {
      reason: `cordon cannot make its private directories (${why})`,
      remedy: REMEDY_PRIVATE_DIR,
      cause: error,
    })
  }
}
