/**
 * A tool call's progress as an async generator: while the call runs, its output so far (the tail,
 * bounded), yielded at most once per interval however many chunks arrive; when it ends, its
 * result as the generator's return value. A consumer that stops pulling does not stop the call:
 * the call's own signal does.
 */
import type { ToolCall } from '../tool/model-tool.js'

/** The output of a running call so far: its last `maxChars` characters, and how many came before them. */
export interface OutputSoFar {
  output: string
  omittedChars: number
}

/** How often progress is yielded at most (ms), and how much of the output it keeps. */
export interface ProgressOptions {
  intervalMs: number
  maxChars: number
}

/** The last `maxChars` characters of everything appended, and how many were dropped before them. */
export class OutputTail {
  private text = ''
  private dropped = 0

  constructor(private readonly maxChars: number) {}

  /** Appends a chunk, dropping the oldest characters beyond the bound. */
  push(chunk: string): void {
    this.text += chunk
    if (this.text.length <= this.maxChars) return
    let cut = this.text.length - this.maxChars
    // Never keep half of a surrogate pair.
    if (/[\uDC00-\uDFFF]/.test(this.text.charAt(cut))) cut++
    this.dropped += cut
    this.text = this.text.slice(cut)
  }

  /** Every character appended so far. */
  get total(): number {
    return this.dropped + this.text.length
  }

  /** The tail kept, and how many characters came before it. */
  snapshot(): OutputSoFar {
    return { output: this.text, omittedChars: this.dropped }
  }
}

/** Resolves after `ms`, or at once when `done` settles. */
function pause(ms: number, done: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    const stop = () => {
      clearTimeout(timer)
      resolve()
    }
    done.then(stop, stop)
  })
}

/**
 * Runs `call` with an output sink and yields the output so far while it runs (only when new output
 * came, at most once per `intervalMs`); returns the call's result, or throws what it threw.
 */
export async function* progressOf<R>(
  call: (onOutput: NonNullable<ToolCall['onOutput']>) => Promise<R>,
  options: ProgressOptions,
): AsyncGenerator<OutputSoFar, R> {
  const tail = new OutputTail(options.maxChars)
  let wake: (() => void) | undefined
  let settled = false
  const ping = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  const finished = call((chunk) => {
    tail.push(chunk)
    ping()
  })
  const end = () => {
    settled = true
    ping()
  }
  finished.then(end, end)
  let shown = 0
  for (;;) {
    if (!settled && tail.total === shown) await new Promise<void>((resolve) => (wake = resolve))
    if (settled) break
    shown = tail.total
    yield tail.snapshot()
    // Chunks that arrive meanwhile are shown together, in the next yield.
    await pause(options.intervalMs, finished)
  }
  return await finished
}
