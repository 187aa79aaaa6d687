/**
 * The caller's signal had already aborted when a command was to start: nothing was spawned.
 * A cancellation, never a sandbox error (the reference: "an already-aborted signal is rethrown
 * as cancellation").
 */
import { abortedBeforeSpawnText } from './spawn-failure.js'

/** The code of a CommandAbortedError. */
export const ABORTED = 'ABORTED'

/** Thrown by `run()` for an already-aborted signal; `reason` is the signal's reason, as given. */
export class CommandAbortedError extends Error {
  override readonly name = 'CommandAbortedError' as const
  readonly code = ABORTED
  /** The abort reason of the caller's signal. */
  readonly reason: unknown

  constructor(reason: unknown) {
    super(abortedBeforeSpawnText(reason), { cause: reason })
    this.reason = reason
  }
}

/** Whether `value` is a CommandAbortedError, from this realm or any other (brand on name and code). */
export function isCommandAbortedError(value: unknown): value is CommandAbortedError {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return v.name === 'CommandAbortedError' && v.code === ABORTED
}
