/**
 * Bounded collection of one child output stream (stdout or stderr). A command may print
 * gigabytes; the host keeps only the last `maxBytes` in memory (a chunk deque trimmed at
 * the head, so memory stays flat however long the stream runs) and, when asked, writes
 * the complete stream to a private spill file up to a second cap so the lost head stays
 * recoverable. Readers are offset-based and non-consuming, so independent readers never
 * steal each other's output.
 *
 * Spill writes are SYNCHRONOUS, coalesced into ~256 KiB `writev` batches, so `finish()`
 * is synchronous and readers never wait. Measured on the 2-core dev VM (Node 20, spill on
 * ext4 /tmp, 256 MiB of `head -c … /dev/zero` per run, interleaved runs, medians):
 *   raw pipe loop, 15 rounds, MiB/s: plain read 877 · + writeSync per chunk 611 ·
 *     + writevSync batches of 128/256/512 KiB 668/660/707 (4 MiB: 467, cache-cold) ·
 *     + async fs.writev queue on the threadpool 509 (0.58x).
 *   bench/collect.bench.ts, this class, 9 rounds, two runs: peer 910/688 MiB/s;
 *     64 KiB tail + 512 MiB spill 0.78x/0.82x; tail only 0.94x/0.98x (pushing 256 MiB
 *     through the tail alone costs 0.6 ms: the rest is noise); collector RSS growth
 *     within 1 MiB of the peer's (Node's own pipe buffers dominate).
 * The spill costs one extra copy into the page cache, which no write strategy hides on
 * two cores, so the 1.0x-with-spill goal is NOT met here (~0.8x). Async loses outright:
 * the writer thread competes with the producer and the reader, copies cache-cold
 * buffers, and needs an unbounded queue or backpressure that the collector cannot apply.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

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

/** Spill writes are coalesced until this many bytes are pending. */
const SPILL_BATCH_BYTES = 256 * 1024
/** ...or this many chunks (keeps each writev well under IOV_MAX). */
const SPILL_BATCH_CHUNKS = 512
/** Chunks shorter than this are copied into a shared stage buffer instead of kept as objects. */
const SMALL_CHUNK_BYTES = 512
const STAGE_BYTES = 8 * 1024

let spillCounter = 0

type SpillState =
  | 'off' // spilling not requested
  | 'idle' // requested, stream has not overflowed yet
  | 'open' // file holds the stream so far (plus `pending`)
  | 'closed' // finished and closed: file holds the complete stream
  | 'discarded' // stream exceeded the spill cap: no file
  | 'failed' // an I/O error: no file (see `spillError`)

/**
 * The bounded tail (and optional spill file) of one output stream; implements the
 * non-consuming {@link SubprocessOutputReader}. `push` takes ownership of each chunk:
 * the caller must not mutate a buffer after pushing it.
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

  // Tail deque: ring[ringStart..] are the retained chunks; the first has `headSkip` bytes
  // already dropped. `retained` = bytes in the window.
  #ring: (Buffer | undefined)[] = []
  #ringStart = 0
  #headSkip = 0
  #retained = 0
  #total = 0
  // Small-chunk stage: the last ring entry may be a growing view of `#stage`.
  #stage: Buffer | undefined
  #stageUsed = 0
  #stageViewStart = 0
  #lastIsStage = false

  #spillState: SpillState
  #spillPath: string | undefined
  #spillFd = -1
  #pending: Buffer[] = []
  #pendingBytes = 0
  #spillError: Error | undefined
  #finished = false

  /** Validates the caps; allocates nothing until data arrives. */
  constructor(options: OutputCollectorOptions) {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 0) {
      throw new RangeError(`maxBytes must be a non-negative integer, got ${String(options.maxBytes)}`)
    }
    if (options.spill !== undefined) {
      const cap = options.spill.maxBytes
      if (!Number.isSafeInteger(cap) || cap < 0) {
        throw new RangeError(`spill.maxBytes must be a non-negative integer, got ${String(cap)}`)
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

  /** Appends one chunk; never throws for I/O (a spill failure only disables the spill). Ignored after finish. */
  push(chunk: Buffer): void {
    if (this.#finished || chunk.length === 0) return
    const total = this.#total + chunk.length
    this.#spill(chunk, total)
    this.#total = total
    this.#appendTail(chunk)
  }

  /**
   * Ends the stream: flushes and closes the spill file. If the flush or close fails the
   * spill is withheld (path dropped, file unlinked). Idempotent.
   */
  finish(): void {
    if (this.#finished) return
    this.#finished = true
    this.#stage = undefined
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
      throw new RangeError(`fromByte must be a non-negative integer, got ${String(fromByte)}`)
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

  #appendTail(chunk: Buffer): void {
    const max = this.maxBytes
    if (chunk.length >= max) {
      // The chunk alone fills the window: drop everything, keep its last `max` bytes
      // (copied when trimmed, so a huge chunk's backing store is not retained).
      this.#ring = max === 0 ? [] : [chunk.length === max ? chunk : Buffer.from(chunk.subarray(chunk.length - max))]
      this.#ringStart = 0
      this.#headSkip = 0
      this.#retained = max
      this.#lastIsStage = false
      return
    }
    if (chunk.length < SMALL_CHUNK_BYTES) {
      this.#appendSmall(chunk)
    } else {
      this.#ring.push(chunk)
      this.#lastIsStage = false
    }
    this.#retained += chunk.length
    this.#trim()
  }

  #appendSmall(chunk: Buffer): void {
    let stage = this.#stage
    if (stage !== undefined && this.#lastIsStage && this.#stageUsed + chunk.length <= stage.length) {
      chunk.copy(stage, this.#stageUsed)
      this.#stageUsed += chunk.length
      this.#ring[this.#ring.length - 1] = stage.subarray(this.#stageViewStart, this.#stageUsed)
      return
    }
    if (stage === undefined || this.#stageUsed + chunk.length > stage.length) {
      stage = Buffer.allocUnsafeSlow(STAGE_BYTES)
      this.#stage = stage
      this.#stageUsed = 0
    }
    this.#stageViewStart = this.#stageUsed
    chunk.copy(stage, this.#stageUsed)
    this.#stageUsed += chunk.length
    this.#ring.push(stage.subarray(this.#stageViewStart, this.#stageUsed))
    this.#lastIsStage = true
  }

  #trim(): void {
    let excess = this.#retained - this.maxBytes
    while (excess > 0) {
      const first = this.#ring[this.#ringStart]!
      const available = first.length - this.#headSkip
      if (available <= excess) {
        this.#ring[this.#ringStart] = undefined
        this.#ringStart += 1
        this.#headSkip = 0
        this.#retained -= available
        excess -= available
      } else {
        this.#headSkip += excess
        this.#retained -= excess
        excess = 0
      }
    }
    if (this.#ringStart >= this.#ring.length) {
      this.#ring = []
      this.#ringStart = 0
      this.#lastIsStage = false
    } else if (this.#ringStart > 64 && this.#ringStart * 2 > this.#ring.length) {
      this.#ring = this.#ring.slice(this.#ringStart)
      this.#ringStart = 0
    }
  }

  /** Bytes [from, to) of the stream; both must lie inside the retained window. */
  #slice(from: number, to: number): Buffer {
    if (from >= to) return Buffer.alloc(0)
    const parts: Buffer[] = []
    let pos = this.#total - this.#retained - this.#headSkip // absolute offset of ring[ringStart][0]
    for (let i = this.#ringStart; i < this.#ring.length && pos < to; i++) {
      const buf = this.#ring[i]!
      const end = pos + buf.length
      if (end > from) parts.push(buf.subarray(Math.max(from - pos, 0), Math.min(to - pos, buf.length)))
      pos = end
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
  }

  // --- spill --------------------------------------------------------------------------

  #spill(chunk: Buffer, total: number): void {
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
      const head = this.#slice(this.#total - this.#retained, this.#total)
      if (head.length > 0) this.#enqueue(head)
      this.#enqueue(chunk)
    } else if (state === 'open') {
      if (total > this.spillMaxBytes!) {
        this.#discard()
        return
      }
      this.#enqueue(chunk)
    }
  }

  #open(): void {
    const dir = this.#spillDir!()
    spillCounter += 1
    const name = `cordon-${this.#pid}-${spillCounter}-${randomBytes(6).toString('hex')}-${this.stream}.log`
    const file = path.join(dir, name)
    // 'wx' = O_CREAT|O_EXCL: fails if the path or a symlink there already exists.
    const fd = fs.openSync(file, 'wx', 0o600)
    this.#spillFd = fd
    this.#spillPath = file
    this.#spillState = 'open'
    fs.fchmodSync(fd, 0o600) // exact mode whatever the umask
  }

  #enqueue(buf: Buffer): void {
    this.#pending.push(buf)
    this.#pendingBytes += buf.length
    if (this.#pendingBytes >= SPILL_BATCH_BYTES || this.#pending.length >= SPILL_BATCH_CHUNKS) {
      this.#flushQuietly()
    }
  }

  /** Writes every pending buffer; throws on I/O error. */
  #flush(): void {
    let bufs = this.#pending
    this.#pending = []
    this.#pendingBytes = 0
    while (bufs.length > 0) {
      let written = bufs.length === 1 ? fs.writeSync(this.#spillFd, bufs[0]!) : fs.writevSync(this.#spillFd, bufs)
      // Partial write: drop what was written and retry the rest.
      let i = 0
      while (i < bufs.length && written >= bufs[i]!.length) {
        written -= bufs[i]!.length
        i += 1
      }
      if (i === bufs.length) return
      const rest = bufs.slice(i)
      rest[0] = rest[0]!.subarray(written)
      bufs = rest
    }
  }

  #flushQuietly(): void {
    if (this.#spillState !== 'open' || this.#pendingBytes === 0) return
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
    this.#pending = []
    this.#pendingBytes = 0
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
