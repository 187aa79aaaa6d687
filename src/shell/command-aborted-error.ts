/**
 * The shell's name for an AbortedError (policy/errors.ts): a command whose signal had already
 * aborted, so nothing was spawned. `run()` no longer throws it (it resolves `aborted: true`, as
 * seed 000 has every abort do); kept under its own name and brand for callers that check it, and
 * `isAbortedError` accepts it too.
 */
import { ABORTED, AbortedError } from '../policy/errors.js'

export { ABORTED }

/** An already-aborted signal's cancellation; `reason` is the signal's reason, as given. */
export class CommandAbortedError extends AbortedError {
  override readonly name = 'CommandAbortedError' as const
}

/** Whether `value` is a CommandAbortedError, from this realm or any other (brand on name and code). */
export function isCommandAbortedError(value: unknown): value is CommandAbortedError {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return v.name === 'CommandAbortedError' && v.code === ABORTED
}
