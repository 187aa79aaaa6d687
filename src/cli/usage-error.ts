/** A command-line mistake: one line naming it, then `see cordon VERB --help`; exit 125 (as timeout(1) does). */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  readonly code = 'CORDON_USAGE'
}

/** Exit status when cordon itself could not run the command (bad usage, no sandbox). */
export const EXIT_CORDON_FAILED = 125
/** Exit status of a timed-out command (as timeout(1)). */
export const EXIT_TIMED_OUT = 124
