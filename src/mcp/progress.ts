/**
 * A foreground command's output as MCP progress notifications, for a request that carries a
 * `progressToken`. Output is coalesced (at most one notification per interval, never one per
 * chunk), each message bounded to its last characters, and every control, bidi or invisible
 * character but the newline and the tab shown as a visible escape (src/policy/display-text.ts):
 * a client's UI cannot be driven by the command's escapes. `progress` is the count of output
 * characters so far, so it grows with every notification. Nothing is sent after `finish()`, which
 * the server awaits before it answers: a notification after the result names a finished request.
 */
import { escapeOf, needsEscapeAfter } from '../policy/display-text.js'

/** The most characters one progress message holds (the tail of the new output is kept). */
export const MAX_PROGRESS_MESSAGE = 4096

/** How long output gathers before it goes out as one notification, in ms. */
export const PROGRESS_INTERVAL_MS = 200

/** What one notification carries (MCP `notifications/progress` params). */
export interface ProgressParams {
  progressToken: string | number
  progress: number
  message: string
}

/** Sends one notification; its failure (a closed transport) is the sender's to swallow. */
export type SendProgress = (params: ProgressParams) => Promise<void>

/** The code point that ends just before `i` in `s`, if any. */
function codePointBefore(s: string, i: number): number | undefined {
  if (i <= 0) return undefined
  const low = s.charCodeAt(i - 1)
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const pair = s.codePointAt(i - 2) as number
    if (pair > 0xffff) return pair
  }
  return low
}

/** The escaped tail of `text` within `budget` characters, and where in `text` it starts. */
function tailWithin(text: string, budget: number): { shown: string; start: number } {
  const pieces: string[] = []
  let length = 0
  let start = text.length
  while (start > 0) {
    const cp = codePointBefore(text, start) as number
    const from = start - (cp > 0xffff ? 2 : 1)
    const keep = cp === 0x0a || cp === 0x09 || !needsEscapeAfter(codePointBefore(text, from), cp)
    const piece = keep ? text.slice(from, start) : escapeOf(cp)
    if (length + piece.length > budget) break
    pieces.push(piece)
    length += piece.length
    start = from
  }
  return { shown: pieces.reverse().join(''), start }
}

/**
 * The last characters of `text`, escaped, within `max` characters: a newline or tab stays as it
 * is, every other character needsEscapeAfter names becomes its visible escape. When text was
 * cut, the message starts with `…[N characters not shown]…` (N counts the original text).
 */
export function progressMessage(text: string, max = MAX_PROGRESS_MESSAGE): string {
  const whole = tailWithin(text, max)
  if (whole.start === 0) return whole.shown
  const marker = (n: number) => `…[${n} characters not shown]…`
  const tail = tailWithin(text, max - marker(text.length).length)
  return `${marker(tail.start)}${tail.shown}`
}

/** One request's output on its way to the client as progress notifications. */
export class ProgressStream {
  #pending = ''
  #progress = 0
  #timer: NodeJS.Timeout | undefined
  #sending: Promise<void> = Promise.resolve()
  #finished = false

  constructor(
    private readonly token: string | number,
    private readonly send: SendProgress,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {}

  /** Takes a chunk of the command's output (either stream); it goes out with the next notification. */
  push(chunk: string): void {
    if (this.#finished || chunk === '') return
    this.#pending += chunk
    // Only the tail is ever shown: keep a bounded buffer (a character is at most a few escape characters).
    if (this.#pending.length > MAX_PROGRESS_MESSAGE * 4) {
      this.#progress += this.#pending.length - MAX_PROGRESS_MESSAGE * 4
      this.#pending = this.#pending.slice(-MAX_PROGRESS_MESSAGE * 4)
    }
    this.#timer ??= setTimeout(() => this.#flush(), this.intervalMs)
  }

  /** Sends what is pending now and stops: resolves once every notification was handed to the transport. */
  async finish(): Promise<void> {
    if (!this.#finished) {
      this.#flush()
      this.#finished = true
    }
    await this.#sending
  }

  #flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#pending === '' || this.#finished) return
    const text = this.#pending
    this.#pending = ''
    this.#progress += text.length
    const params = { progressToken: this.token, progress: this.#progress, message: progressMessage(text) }
    // One after another, in order: a later notification never overtakes an earlier one.
    this.#sending = this.#sending.then(() => this.send(params)).catch(() => undefined)
  }
}
