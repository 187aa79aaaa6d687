/**
 * The host end of a child's output pipe in collect mode, read natively into one reused buffer
 * (`native.readPipe`): what the runtime needs of a socket there (`closed`, 'end' then 'close',
 * `destroy()`) without loading `node:net` and the stream machinery for bytes it only copies.
 */
import { EventEmitter } from 'node:events'
import { loadNative } from '../native.js'

/** Receives bytes `[0, n)` of `buf`, a buffer reused for the next read: copy what you keep. */
export type PipeReader = (buf: Buffer, n: number) => void

/** A pipe read natively: `reader` gets each read; 'end' (EOF) or 'error', then 'close', follow. */
export class NativePipe extends EventEmitter {
  /** True once the pipe is closed (at its end, on an error, or by destroy()). */
  closed = false
  private readonly id: number

  /** Reads `fd` (which it owns from now on) into `buffer`, handing each read to `reader`. */
  constructor(fd: number, buffer: Buffer, reader: PipeReader) {
    super()
    this.id = loadNative().readPipe(fd, buffer, (n) => {
      if (n > 0) return reader(buffer, n)
      this.closed = true
      if (n === 0) this.emit('end')
      else if (this.listenerCount('error') > 0) {
        this.emit('error', Object.assign(new Error(`read failed (errno ${-n})`), { errno: -n }))
      }
      this.emit('close')
    })
  }

  /** Stops reading at once and closes the fd; 'close' follows on the next tick (as for a socket). */
  destroy(): this {
    return this.stop(false)
  }

  /** Hands over what the pipe already holds (bounded), then stops as destroy() does. */
  finishReading(): this {
    return this.stop(true)
  }

  private stop(readFirst: boolean): this {
    if (this.closed) return this
    this.closed = true // a destroy() from the reader during the last reads does nothing more
    loadNative().stopPipe(this.id, readFirst)
    process.nextTick(() => this.emit('close'))
    return this
  }
}
