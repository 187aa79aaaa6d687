/**
 * The in-memory tail of one stream: the last `maxBytes` bytes in a byte ring that grows
 * geometrically up to `maxBytes` and then wraps, so memory stays flat however long the stream
 * runs. Positions are whole-stream offsets; every append copies, so the caller may reuse its
 * buffer at once.
 */

/** First ring allocation (or maxBytes when smaller); it then doubles up to maxBytes. */
const RING_INITIAL_BYTES = 4096

/** The last `maxBytes` bytes of a stream, addressed by whole-stream offsets. */
export class TailRing {
  readonly maxBytes: number
  // `#retained` bytes starting at `#ring[#head]`, wrapping at `#ring.length`. The ring grows
  // (linearised, head 0) until it is `maxBytes` long; only then does it wrap.
  #ring: Buffer | undefined
  #head = 0
  #retained = 0
  #total = 0

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes
  }

  /** Bytes appended so far (the whole-stream length). */
  get total(): number {
    return this.#total
  }

  /** Bytes held (≤ maxBytes): the stream's last `retained` bytes. */
  get retained(): number {
    return this.#retained
  }

  /** The stream offset of the first byte held. */
  get windowStart(): number {
    return this.#total - this.#retained
  }

  /** Appends bytes [start, end) of `src` (copied), dropping the oldest beyond maxBytes. */
  append(src: Buffer, start: number, end: number): void {
    this.#total += end - start
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
    this.#write(ring, src, start, end, need)
  }

  /** Writes at the tail position; when full this overwrites exactly the oldest bytes dropped. */
  #write(ring: Buffer, src: Buffer, start: number, end: number, need: number): void {
    const cap = ring.length
    const n = end - start
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

  /** Calls `fn` with the (at most two) ring ranges holding stream bytes [from, to), inside the window. */
  forEachPart(from: number, to: number, fn: (ring: Buffer, start: number, end: number) => void): void {
    const ring = this.#ring
    if (ring === undefined || from >= to) return
    const cap = ring.length
    let at = this.#head + (from - this.windowStart)
    if (at >= cap) at -= cap
    const n = to - from
    const first = Math.min(n, cap - at)
    fn(ring, at, at + first)
    if (first < n) fn(ring, 0, n - first)
  }

  /** Bytes [from, to) of the stream; both must lie inside the window. A view when contiguous. */
  slice(from: number, to: number): Buffer {
    const ring = this.#ring
    if (ring === undefined || from >= to) return Buffer.alloc(0)
    const cap = ring.length
    let at = this.#head + (from - this.windowStart)
    if (at >= cap) at -= cap
    if (at + (to - from) <= cap) return ring.subarray(at, at + (to - from))
    const out = Buffer.allocUnsafe(to - from)
    this.#copyOut(from, to, out, 0)
    return out
  }

  /** The ring, at least `size` long (contents discarded when it is reallocated). */
  #ensureRing(size: number): Buffer {
    if (this.#ring === undefined || this.#ring.length < size) this.#ring = Buffer.allocUnsafeSlow(size)
    return this.#ring
  }

  /** Reallocates the ring at `size` (≥ retained), linearising the retained bytes at 0. */
  #grow(size: number): Buffer {
    const next = Buffer.allocUnsafeSlow(size)
    if (this.#retained > 0) this.#copyOut(this.windowStart, this.#total, next, 0)
    this.#ring = next
    this.#head = 0
    return next
  }

  /** Copies stream bytes [from, to) (inside the window) into `target` at `offset`. */
  #copyOut(from: number, to: number, target: Buffer, offset: number): void {
    this.forEachPart(from, to, (part, s, e) => {
      offset += part.copy(target, offset, s, e)
    })
  }
}
