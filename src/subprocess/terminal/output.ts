/**
 * A terminal's output as ordered UTF-8 text, fanned out to listeners (node-pty's
 * `onData → { dispose }` shape) and to async iterators, and ended exactly once.
 *
 * Bytes from the master go through one UTF-8 decoder, so no chunk ends or starts inside a
 * character however the reads fall; `end()` flushes it (an incomplete final character becomes
 * U+FFFD). Text handed over by a backend that decodes itself is passed through as is. Listeners and iterators see what arrives after they
 * attach: nothing is delivered before the `spawnTerminal` promise's continuation runs, so a
 * consumer that attaches right after awaiting it sees everything.
 *
 * Backpressure: an iterator that falls more than `HIGH_WATER` characters behind pauses the
 * terminal (the program then blocks on its own writes, as under a slow real terminal) until
 * every iterator is back under `LOW_WATER`. Listeners are called synchronously and never pause.
 */
import { StringDecoder } from 'node:string_decoder'
import type { SubprocessTerminalDisposable } from '../types.js'

/** Characters queued for one iterator before the terminal is paused. */
export const HIGH_WATER = 1 << 20
/** Characters queued below which a paused terminal resumes. */
export const LOW_WATER = 1 << 16

/** What the output asks of the terminal for flow control. */
export interface FlowControl {
  pause(): void
  resume(): void
}

interface Reader {
  queue: string[]
  queued: number
  wake: (() => void) | undefined
}

/** The ordered output of one terminal. */
export class TerminalOutput {
  private readonly decoder = new StringDecoder('utf8')
  private readonly listeners = new Set<(text: string) => void>()
  private readonly readers = new Set<Reader>()
  private paused = false
  private finished = false

  constructor(private readonly flow: FlowControl) {}

  /** Whether the output has ended. */
  get ended(): boolean {
    return this.finished
  }

  /** Delivers one chunk from the terminal. */
  push(data: string | Buffer): void {
    if (this.finished) return
    const text = typeof data === 'string' ? data : this.decoder.write(data)
    if (text.length > 0) this.emit(text)
  }

  /** Ends the output: flushes the decoder, finishes every iterator, drops every listener. */
  end(): void {
    if (this.finished) return
    const tail = this.decoder.end()
    if (tail.length > 0) this.emit(tail)
    this.finished = true
    this.listeners.clear()
    for (const reader of this.readers) reader.wake?.()
    if (this.paused) {
      this.paused = false
      this.flow.resume()
    }
  }

  /** Calls `listener` with every later chunk until disposed or ended. */
  onData(listener: (text: string) => void): SubprocessTerminalDisposable {
    if (this.finished) return { dispose() {} }
    // A wrapper per call, so one function added twice is two listeners, each disposable.
    const entry = (text: string) => listener(text)
    this.listeners.add(entry)
    return { dispose: () => void this.listeners.delete(entry) }
  }

  /** An iterator over every later chunk; it finishes when the output ends (or on `return()`). */
  iterate(): AsyncIterableIterator<string> {
    const reader: Reader = { queue: [], queued: 0, wake: undefined }
    if (!this.finished) this.readers.add(reader)
    const release = () => {
      this.readers.delete(reader)
      reader.queue.length = 0
      reader.queued = 0
      this.maybeResume()
    }
    const iterator: AsyncIterableIterator<string> = {
      next: async () => {
        for (;;) {
          const text = reader.queue.shift()
          if (text !== undefined) {
            reader.queued -= text.length
            this.maybeResume()
            return { value: text, done: false }
          }
          if (this.finished || !this.readers.has(reader)) {
            release()
            return { value: undefined, done: true }
          }
          await new Promise<void>((resolve) => {
            reader.wake = resolve
          })
          reader.wake = undefined
        }
      },
      return: async () => {
        release()
        reader.wake?.()
        return { value: undefined, done: true }
      },
      [Symbol.asyncIterator]: () => iterator,
    }
    return iterator
  }

  private emit(text: string): void {
    let failure: { error: unknown } | undefined
    for (const listener of this.listeners) {
      try {
        listener(text)
      } catch (error) {
        failure ??= { error }
      }
    }
    for (const reader of this.readers) {
      reader.queue.push(text)
      reader.queued += text.length
      reader.wake?.()
      if (reader.queued > HIGH_WATER && !this.paused) {
        this.paused = true
        this.flow.pause()
      }
    }
    // A throwing listener must not starve the others; it surfaces like an EventEmitter listener's.
    if (failure) {
      const { error } = failure
      queueMicrotask(() => {
        throw error
      })
    }
  }

  private maybeResume(): void {
    if (!this.paused) return
    for (const reader of this.readers) if (reader.queued > LOW_WATER) return
    this.paused = false
    this.flow.resume()
  }
}
