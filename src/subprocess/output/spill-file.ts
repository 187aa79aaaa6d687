/**
 * The spill file of one stream: once the stream outgrows its in-memory tail, the whole stream
 * (the tail so far, then every later byte) goes to a private file (0600, O_EXCL) up to a second
 * cap, so the head the tail lost stays recoverable. Writes are staged in one reused buffer and
 * written SYNCHRONOUSLY when it is full: readers never wait, and the steady state allocates
 * nothing per chunk (async writes lost outright in measurements: thread-pool contention on two
 * cores). An I/O error or the cap withholds the file; the tail is never affected.
 */
import fs from 'node:fs'
import path from 'node:path'
import { uniqueSuffix } from '../private-dirs/unique-name.js'
import type { TailRing } from './tail-ring.js'

/** Spill writes are staged in one buffer of this size and written when it is full. */
const SPILL_BATCH_BYTES = 256 * 1024

let spillCounter = 0

type SpillState =
  | 'idle' // the stream has not outgrown its tail yet
  | 'open' // file holds the stream so far (plus the staged bytes)
  | 'closed' // finished and closed: file holds the complete stream
  | 'discarded' // stream exceeded the spill cap: no file
  | 'failed' // an I/O error: no file (see `error`)

/** Construction options for {@link SpillFile}. */
export interface SpillFileOptions {
  /** Whole-stream cap in bytes: a longer stream gets no file. */
  maxBytes: number
  /** Returns the private (0700) directory for the file; called only when the file is first needed. */
  dir: () => string
  /** Pid named in the file name. */
  pid: number
  /** The stream, named in the file name. */
  stream: 'stdout' | 'stderr'
}

/** Writes bytes [start, end) of `buf` to `fd`, retrying partial writes; throws on I/O error. */
function writeAll(fd: number, buf: Buffer, start: number, end: number): void {
  while (start < end) start += fs.writeSync(fd, buf, start, end - start)
}

/** The whole stream on disk, up to a cap (see the module comment). */
export class SpillFile {
  /** Whole-stream cap in bytes. */
  readonly maxBytes: number
  readonly #options: SpillFileOptions
  #state: SpillState = 'idle'
  #path: string | undefined
  #fd = -1
  // Staging: bytes [0, #staged) of #stage belong to the file but are not written yet.
  #stage: Buffer | undefined
  #staged = 0
  #error: Error | undefined

  constructor(options: SpillFileOptions) {
    this.maxBytes = options.maxBytes
    this.#options = options
  }

  /** The file's path while it exists and holds the stream so far; else undefined. */
  get path(): string | undefined {
    return this.#state === 'open' || this.#state === 'closed' ? this.#path : undefined
  }

  /** The I/O error that ended spilling, if one did. */
  get error(): Error | undefined {
    return this.#error
  }

  /**
   * Takes bytes [start, end) of `src`, which bring the stream to `total`, before `tail` holds
   * them. On the first overflow of the tail nothing has been dropped yet, so the tail plus this
   * chunk is the whole stream: the file opens with both. Never throws for I/O.
   */
  offer(src: Buffer, start: number, end: number, total: number, tail: TailRing): void {
    if (this.#state === 'idle') {
      if (total <= tail.maxBytes) return
      if (total > this.maxBytes) {
        this.#state = 'discarded'
        return
      }
      try {
        this.#open()
      } catch (error) {
        this.#fail(error)
        return
      }
      tail.forEachPart(tail.windowStart, tail.total, (ring, s, e) => this.#enqueue(ring, s, e))
      this.#enqueue(src, start, end)
    } else if (this.#state === 'open') {
      if (total > this.maxBytes) {
        this.#discard()
        return
      }
      this.#enqueue(src, start, end)
    }
  }

  /** Writes the staged bytes, so the file covers the stream so far; an I/O error withholds the file. */
  flushQuietly(): void {
    if (this.#state !== 'open' || this.#staged === 0) return
    try {
      this.#flush()
    } catch (error) {
      this.#fail(error)
    }
  }

  /** Flushes and closes the file; if either fails the file is withheld (path dropped, file unlinked). */
  finish(): void {
    if (this.#state !== 'open') return
    try {
      this.#flush()
    } catch (error) {
      this.#fail(error)
      return
    }
    const fd = this.#fd
    this.#fd = -1
    try {
      fs.closeSync(fd)
    } catch (error) {
      // The fd is gone either way (never close twice: the number may be reused).
      this.#fail(error)
      return
    }
    this.#stage = undefined
    this.#state = 'closed'
  }

  #open(): void {
    const { pid, stream } = this.#options
    const dir = this.#options.dir()
    spillCounter += 1
    const file = path.join(dir, `cordon-${pid}-${spillCounter}-${uniqueSuffix()}-${stream}.log`)
    // 'wx' = O_CREAT|O_EXCL: fails if the path or a symlink there already exists.
    const fd = fs.openSync(file, 'wx', 0o600)
    this.#fd = fd
    this.#path = file
    this.#state = 'open'
    fs.fchmodSync(fd, 0o600) // exact mode whatever the umask
  }

  /** Stages (or, for a large run with an empty stage, writes directly) bytes [start, end) of `src`. */
  #enqueue(src: Buffer, start: number, end: number): void {
    while (start < end && this.#state === 'open') {
      this.#stage ??= Buffer.allocUnsafeSlow(SPILL_BATCH_BYTES)
      const stage = this.#stage
      if (this.#staged === 0 && end - start >= stage.length) {
        try {
          writeAll(this.#fd, src, start, end)
        } catch (error) {
          this.#fail(error)
        }
        return
      }
      const n = Math.min(end - start, stage.length - this.#staged)
      src.copy(stage, this.#staged, start, start + n)
      this.#staged += n
      start += n
      if (this.#staged === stage.length) this.flushQuietly()
    }
  }

  /** Writes the staged bytes; throws on I/O error. */
  #flush(): void {
    const n = this.#staged
    this.#staged = 0
    if (n > 0) writeAll(this.#fd, this.#stage!, 0, n)
  }

  /** The stream outgrew the cap: close and unlink; the tail continues alone. */
  #discard(): void {
    this.#drop()
    this.#state = 'discarded'
  }

  /** An I/O error: withhold the file (close and unlink best-effort) and record the error. */
  #fail(error: unknown): void {
    this.#error = error instanceof Error ? error : new Error(String(error))
    this.#drop()
    this.#state = 'failed'
  }

  #drop(): void {
    this.#stage = undefined
    this.#staged = 0
    if (this.#fd >= 0) {
      try {
        fs.closeSync(this.#fd)
      } catch {
        // already reported or irrelevant: the file is being thrown away
      }
      this.#fd = -1
    }
    if (this.#path !== undefined) {
      try {
        fs.unlinkSync(this.#path)
      } catch {
        // best effort; the private spill directory is removed at disposal
      }
      this.#path = undefined
    }
  }
}
