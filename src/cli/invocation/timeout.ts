/**
 * `--timeout MS`: digits only, from 1 to the longest delay a Node timer holds. A longer one is
 * refused rather than capped: Node would fire it after 1 ms (the run reported as timed out at
 * once), and a silent cap would not be the timeout the person asked for.
 */
import { displayLine } from '../../policy/display-text.js'
import { MAX_TIMER_DELAY_MS } from '../../subprocess/spec/limits.js'
import { UsageError } from '../usage-error.js'

/** The longest timeout in days, for the message (about 24.8). */
const MAX_DAYS = (MAX_TIMER_DELAY_MS / 86_400_000).toFixed(1)

/**
 * `--timeout`'s value as milliseconds (undefined when absent). Anything but a whole number of
 * milliseconds in plain digits (`-5`, `0`, `1.5`, `1e3`, `0x10`, ` 5`), or one above
 * MAX_TIMER_DELAY_MS, throws a UsageError saying which and why.
 */
export function timeoutFrom(value: unknown): number | undefined {
  if (value === undefined) return undefined
  const text = String(value)
  if (!/^[0-9]+$/.test(text))
    throw new UsageError(
      `--timeout: "${displayLine(text)}" is not a whole number of milliseconds (digits only, e.g. --timeout 30000)`,
    )
  const ms = Number(text)
  if (ms === 0) throw new UsageError('--timeout: must be at least 1 ms (0 would end the command at once)')
  if (ms > MAX_TIMER_DELAY_MS)
    throw new UsageError(
      `--timeout: ${text} ms is more than a timer can hold: at most ${MAX_TIMER_DELAY_MS} ms (about ${MAX_DAYS} days)`,
    )
  return ms
}
