/**
 * Bounded collection of one child output stream (stdout or stderr). A command may print
 * gigabytes; the host keeps only the last `maxBytes` in memory (a byte ring that grows
 * geometrically up to `maxBytes` and then wraps, so memory stays flat however long the
 * stream runs) and, when asked, writes the complete stream to a private spill file up to
 * a second cap so the lost head stays recoverable. Readers are offset-based and non-consuming, so independent readers never
 * steal each other's output.
 *
 * Every push COPIES (into the ring and, when spilling, into one reused 256 KiB staging
 * buffer written with `writeSync` when full), so callers may reuse their buffer at once
 * (the pipe is read natively into one recycled buffer, `output/native-pipe.ts`, or through a
 * socket's `onread` option on the portable path, and each read calls `pushCopy`) and the
 * steady state allocates nothing per chunk. Spill
 * writes are SYNCHRONOUS, so `finish()` is synchronous and readers never wait; async
 * writes lost outright in earlier measurements (threadpool contention on two cores).
 *
 * Measured on the 2-core dev VM (Node 20, bench/throughput.mjs: 256 MiB of /dev/zero,
 * 64 KiB tail, interleaved with child_process.spawn; the box was shared, so MB/s is noisy
 * and the ratios are what carry), three runs each, before → after this design (which
 * replaced a deque of owned 'data' chunks plus writev batches of chunk references):
 *   + 512 MiB spill: 1.12/0.85/1.08× node → 1.81/1.82/1.38×; peak RSS growth 31–41 MiB → ≤ 1.1 MiB
 *   tail only:       1.35/1.16/1.49× node → 3.03/2.85/2.19×; peak RSS growth 35–46 MiB → ≤ 1.5 MiB
 * (the change removed both the per-read Buffer allocation and the retained chunk objects;
 * their shares of the gain were not measured separately).
 */
import fs from 'node:fs'
import path from 'node:path'
import { InvalidRequestError } from '../policy/errors.js'
import { uniqueSuffix } from './private-dirs/unique-name.js'

import type { CollectedOutput, SubprocessCollect, SubprocessOutputRead, SubprocessOutputReader } from './types.js'

export type { CollectedOutput, SubprocessCollect, SubprocessOutputRead, SubprocessOutputReader }

/** Which stream a collector holds; it names the spill file. */
export type CollectedStream = 'stdout' | 'stderr'

/** Construction options for {@link OutputCollector}. */
export interface OutputCollectorOptions extends SubprocessCollect {
  /**
   * Returns the private (0700) directory for the spill file. Called lazily, only when a
   * spill file is first needed; required when `spill` is set.
   */
  spillDir?: (() => string) | undefined
  /** The stream this collector holds. */
  stream: CollectedStream
  /** Pid named in the spill file name (the child's); defaults to the host pid. */
  pid?: number | undefined
}

/** Spill writes are staged in one buffer of this size and written when it is full. */
const SPILL_BATCH_BYTES = 256 * 1024
/** First ring allocation (or maxBytes when smaller); it then doubles up to maxBytes. */
const RING_INITIAL_BYTES = 4096

let spillCounter = 0

type SpillState =
  | 'off' // spilling not requested
  | 'idle' // requested, stream has not overflowed yet
  | 'open' // file holds the stream so far (plus the staged bytes)
  | 'closed' // finished and closed: file holds the complete stream
  | 'discarded' // stream exceeded the spill cap: no file
  | 'failed' // an I/O error: no file (see `spillError`)

/**
 * The bounded tail (and optional spill file) of one output stream; implements the
 * non-consuming {@link SubprocessOutputReader}. `push`/`pushCopy` copy what they keep:
 * the caller may reuse its buffer as soon as the call returns.
 */
export class OutputCollector implements SubprocessOutputReader {
  /** The stream this collector holds. */
  readonly stream: CollectedStream
  /** In-memory tail cap in bytes. */
  readonly maxBytes: number
  /** Whole-stream spill cap in bytes; undefined when spilling is off. */
  readonly spillMaxBytes: number | undefined
  readonly #spillDir: (() => string) | undefined
  readonly #pid: number

  // Tail ring: `#retained` bytes starting at `#ring[#head]`, wrapping at `#ring.length`.
  // The ring grows (linearised, head 0) until it is `maxBytes` long; only then does it wrap.
  #ring: Buffer | undefined
  #head = 0
  #retained = 0
  #total = 0

  #spillState: SpillState
  #spillPath: string | undefined
  #spillFd = -1
  // Spill staging: bytes [0, #staged) of #stage are written to the file but not yet flushed.
  #stage: Buffer | undefined
  #staged = 0
  #spillError: Error | undefined
  #finished = false

  /** Validates the caps; allocates nothing until data arrives. */
  constructor(options: OutputCollectorOptions) {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 0) {
      throw new InvalidRequestError([`maxBytes: must be a non-negative integer, got ${String(options.maxBytes)}`])
    }
    if (options.spill !== undefined) {
      const cap = options.spill.maxBytes
      if (!Number.isSafeInteger(cap) || cap < 0) {
        throw new InvalidRequestError([`spill.maxBytes: must be a non-negative integer, got ${String(cap)}`])
      }
      if (typeof options.spillDir !== 'function') {
        throw new TypeError('spillDir is required when spill is enabled')
      }
    }
    if (options.stream !== 'stdout' && options.stream !== 'stderr') {
      throw new TypeError(`stream must be 'stdout' or 'stderr', got ${String(options.stream)}`)
    }
    this.stream = options.stream
    this.maxBytes = options.maxBytes
    this.spillMaxBytes = options.spill?.maxBytes
    this.#spillDir = options.spillDir
    this.#pid = options.pid ?? process.pid
    this.#spillState = options.spill === undefined ? 'off' : 'idle'
  }

  /** Total bytes pushed so far (the whole-stream length). */
  get totalBytes(): number {
    return this.#total
  }

  /** Bytes currently held in the in-memory tail (≤ maxBytes). */
  get retainedBytes(): number {
    return this.#retained
  }

  /** True iff bytes have been dropped from the in-memory tail. */
  get truncated(): boolean {
    return this.#total > this.#retained
  }

  /** Whether {@link finish} has run. */
  get finished(): boolean {
    return this.#finished
  }

  /** The spill file path while the file exists and holds the stream so far; else undefined. */
  get spillPath(): string | undefined {
    return this.#spillState === 'open' || this.#spillState === 'closed' ? this.#spillPath : undefined
  }

  /** The I/O error that ended spilling, if one did (the tail is unaffected). */
  get spillError(): Error | undefined {
    return this.#spillError
  }

  /**
   * Appends one chunk (copied: the caller may reuse it at once); never throws for I/O (a
   * spill failure only disables the spill). Ignored after finish.
   */
  push(chunk: Buffer): void {
    this.pushCopy(chunk, 0, chunk.length)
  }

  /**
   * Appends bytes `[start, end)` of `buf`, copying them; allocation-free once the ring and
   * the spill stage exist. Same semantics as {@link push}.
   */
  pushCopy(buf: Buffer, start: number, end: number): void {
    if (this.#finished || end <= start) return
    const total = this.#total + (end - start)
    if (this.#spillState !== 'off') this.#spill(buf, start, end, total)
    this.#total = total
    this.#appendTail(buf, start, end)
  }

  /**
   * Ends the stream: flushes and closes the spill file. If the flush or close fails the
   * spill is withheld (path dropped, file unlinked). Idempotent.
   */
  finish(): void {
    if (this.#finished) return
    this.#finished = true
    if (this.#spillState !== 'open') return
    try {
      this.#flush()
    } catch (error) {
      this.#fail(error)
      return
    }
    const fd = this.#spillFd
    this.#spillFd = -1
    try {
      fs.closeSync(fd)
    } catch (error) {
      // The fd is gone either way (never close twice: the number may be reused).
      this.#fail(error)
      return
    }
    this.#stage = undefined
    this.#spillState = 'closed'
  }

  /**
   * Non-consuming read from whole-stream offset `fromByte`. An offset older than the
   * window is `lossy` and returns the whole retained tail. Text never starts inside a
   * split UTF-8 character, and before {@link finish} an incomplete trailing character is
   * held back (`nextOffset` stops before it) so the next read decodes it whole. Offsets
   * beyond the stream are clamped. The spill file is flushed first, so it covers every
   * byte before `nextOffset`.
   */
  readFrom(fromByte: number): SubprocessOutputRead {
    if (!Number.isSafeInteger(fromByte) || fromByte < 0) {
      throw new InvalidRequestError([`fromByte: must be a non-negative integer, got ${String(fromByte)}`])
    }
    this.#flushQuietly()
    const total = this.#total
    const windowStart = total - this.#retained
    const from = Math.min(fromByte, total)
    const lossy = from < windowStart
    const bytes = this.#slice(lossy ? windowStart : from, total)
    const start = (lossy ? windowStart : from) > 0 ? leadingContinuationBytes(bytes) : 0
    const held = this.#finished ? 0 : incompleteTrailingBytes(bytes, start)
    const end = bytes.length - held
    const text = start < end ? bytes.toString('utf8', start, end) : ''
    const nextOffset = Math.max(total - held, from)
    const read: SubprocessOutputRead = { text, nextOffset, lossy }
    const spillPath = this.spillPath
    if (spillPath !== undefined) read.spillPath = spillPath
    return read
  }

  /**
   * The batch shape: the retained tail as text (cut forward to a character boundary when
   * bytes were dropped), whether bytes were dropped, and the intact spill path if any.
   */
  result(): CollectedOutput {
    this.#flushQuietly()
    const bytes = this.#slice(this.#total - this.#retained, this.#total)
    const truncated = this.truncated
    const start = truncated ? leadingContinuationBytes(bytes) : 0
    const out: CollectedOutput = { text: bytes.toString('utf8', start), truncated }
    const spillPath = this.spillPath
    if (truncated && spillPath !== undefined) out.spillPath = spillPath
    return out
  }

  // --- tail ---------------------------------------------------------------------------

  #appendTail(src: Buffer, start: number, end: number): void {
    const max = this.maxBytes
    if (max === 0) return
    const n = end - start
    if (n >= max) {
      // The chunk alone fills the window: keep its last `max` bytes.
      const ring = this.#ensureRing(max)
      src.copy(ring, 0, end - max, end)
      this.#head = 0
      this.#retained = max
      return
    }
    const need = this.#retained + n
    let ring = this.#ring
    if (ring === undefined || (need > ring.length && ring.length < max)) {
      ring = this.#grow(Math.min(max, Math.max(need, RING_INITIAL_BYTES, ring === undefined ? 0 : ring.length * 2)))
    }
    const cap = ring.length
    // Write at the tail position; when full this overwrites exactly the oldest bytes dropped.
    let at = this.#head + this.#retained
    if (at >= cap) at -= cap
    const first = Math.min(n, cap - at)
    src.copy(ring, at, start, start + first)
    if (first < n) src.copy(ring, 0, start + first, end)
    if (need > cap) {
      let head = this.#head + (need - cap)
      if (head >= cap) head -= cap
      this.#head = head
      this.#retained = cap
    } else {
      this.#retained = need
    }
  }

  /** The ring, at least `size` long (contents discarded when it is reallocated). */
  #ensureRing(size: number): Buffer {
    if (this.#ring === undefined || this.#ring.length < size) this.#ring = Buffer.allocUnsafeSlow(size)
    return this.#ring
  }

  /** Reallocates the ring at `size` (≥ retained), linearising the retained bytes at 0. */
  #grow(size: number): Buffer {
    const next = Buffer.allocUnsafeSlow(size)
    if (this.#retained > 0) this.#copyOut(this.#total - this.#retained, this.#total, next, 0)
    this.#ring = next
    this.#head = 0
    return next
  }

  /** Copies stream bytes [from, to) (inside the window) into `target` at `offset`. */
  #copyOut(from: number, to: number, target: Buffer, offset: number): void {
    this.#forEachPart(from, to, (part, s, e) => {
      offset += part.copy(target, offset, s, e)
    })
  }

  /** Calls `fn` with the (at most two) ring ranges holding stream bytes [from, to). */
  #forEachPart(from: number, to: number, fn: (ring: Buffer, start: number, end: number) => void): void {
    const ring = this.#ring
    if (ring === undefined || from >= to) return
    const cap = ring.length
    let at = this.#head + (from - (this.#total - this.#retained))
    if (at >= cap) at -= cap
    const n = to - from
    const first = Math.min(n, cap - at)
    fn(ring, at, at + first)
    if (first < n) fn(ring, 0, n - first)
  }

  /** Bytes [from, to) of the stream; both must lie inside the retained window. A view when contiguous. */
  #slice(from: number, to: number): Buffer {
    const ring = this.#ring
    if (ring === undefined || from >= to) return Buffer.alloc(0)
    const cap = ring.length
    let at = this.#head + (from - (this.#total - this.#retained))
    if (at >= cap) at -= cap
    if (at + (to - from) <= cap) return ring.subarray(at, at + (to - from))
    const out = Buffer.allocUnsafe(to - from)
    this.#copyOut(from, to, out, 0)
    return out
  }

  // --- spill --------------------------------------------------------------------------

  #spill(src: Buffer, start: number, end: number, total: number): void {
    const state = this.#spillState
    if (state === 'idle') {
      if (total <= this.maxBytes) return
      // First overflow: nothing has been dropped yet, so the ring plus this chunk is the
      // whole stream.
      if (total > this.spillMaxBytes!) {
        this.#spillState = 'discarded'
        return
      }
      try {
        this.#open()
      } catch (error) {
        this.#fail(error)
        return
      }
      this.#forEachPart(this.#total - this.#retained, this.#total, (ring, s, e) => this.#enqueue(ring, s, e))
      this.#enqueue(src, start, end)
    } else if (state === 'open') {
      if (total > this.spillMaxBytes!) {
        this.#discard()
        return
      }
      this.#enqueue(src, start, end)
    }
  }

  #open(): void {
    const dir = this.#spillDir!()
    spillCounter += 1
    const name = `cordon-${this.#pid}-${spillCounter}-${uniqueSuffix()}-${this.stream}.log`
    const file = path.join(dir, name)
    // 'wx' = O_CREAT|O_EXCL: fails if the path or a symlink there already exists.
    const fd = fs.openSync(file, 'wx', 0o600)
    this.#spillFd = fd
    this.#spillPath = file
    this.#spillState = 'open'
    fs.fchmodSync(fd, 0o600) // exact mode whatever the umask
  }

  /** Stages (or, for a large run with an empty stage, writes directly) bytes [start, end) of `src`. */
  #enqueue(src: Buffer, start: number, end: number): void {
    while (start < end && this.#spillState === 'open') {
      this.#stage ??= Buffer.allocUnsafeSlow(SPILL_BATCH_BYTES)
      const stage = this.#stage
      if (this.#staged === 0 && end - start >= stage.length) {
        try {
          writeAll(this.#spillFd, src, start, end)
        } catch (error) {
          this.#fail(error)
        }
        return
      }
      const n = Math.min(end - start, stage.length - this.#staged)
      src.copy(stage, this.#staged, start, start + n)
      this.#staged += n
      start += n
      if (this.#staged === stage.length) this.#flushQuietly()
    }
  }

  /** Writes the staged bytes; throws on I/O error. */
  #flush(): void {
    const n = this.#staged
    this.#staged = 0
    if (n > 0) writeAll(this.#spillFd, this.#stage!, 0, n)
  }

  #flushQuietly(): void {
    if (this.#spillState !== 'open' || this.#staged === 0) return
    try {
      this.#flush()
    } catch (error) {
      this.#fail(error)
    }
  }

  /** The stream outgrew the spill cap: close and unlink; the tail continues alone. */
  #discard(): void {
    this.#drop()
    this.#spillState = 'discarded'
  }

  /** An I/O error: withhold the spill (close and unlink best-effort) and record the error. */
  #fail(error: unknown): void {
    this.#spillError = error instanceof Error ? error : new Error(String(error))
    this.#drop()
    this.#spillState = 'failed'
  }

  #drop(): void {
    this.#stage = undefined
    this.#staged = 0
    if (this.#spillFd >= 0) {
      try {
        fs.closeSync(this.#spillFd)
      } catch {
        // already reported or irrelevant: the file is being thrown away
      }
      this.#spillFd = -1
    }
    if (this.#spillPath !== undefined) {
      try {
        fs.unlinkSync(this.#spillPath)
      } catch {
        // best effort; the private spill directory is removed at disposal
      }
      this.#spillPath = undefined
    }
  }
}

/** Writes bytes [start, end) of `buf` to `fd`, retrying partial writes; throws on I/O error. */
function writeAll(fd: number, buf: Buffer, start: number, end: number): void {
  while (start < end) start += fs.writeSync(fd, buf, start, end - start)
}

/** Count of leading UTF-8 continuation bytes (at most 3): where a cut split a character. */
function leadingContinuationBytes(bytes: Buffer): number {
  let n = 0
  while (n < 3 && n < bytes.length && (bytes[n]! & 0xc0) === 0x80) n += 1
  return n
}

/** Length of an incomplete multi-byte character at the end of `bytes[start..]` (0 if none). */
function incompleteTrailingBytes(bytes: Buffer, start: number): number {
  for (let i = bytes.length - 1; i >= Math.max(start, bytes.length - 4); i--) {
    const b = bytes[i]!
    if ((b & 0xc0) === 0x80) continue
    if (b < 0xc0) return 0
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2
    const have = bytes.length - i
    return have < need ? have : 0
  }
  return 0
}
