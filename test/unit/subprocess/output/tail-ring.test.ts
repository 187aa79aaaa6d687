// The tail ring holds exactly the stream's last maxBytes bytes, whatever the chunk sizes: checked
// against a plain concatenation over generated chunk sequences, through growth and wrap-around.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TailRing } from '../../../../src/subprocess/output/tail-ring.js'

/** The ring's whole window as one buffer, read in two halves to cross the wrap point. */
function windowOf(ring: TailRing): Buffer {
  const mid = ring.windowStart + Math.floor(ring.retained / 2)
  return Buffer.concat([ring.slice(ring.windowStart, mid), ring.slice(mid, ring.total)])
}

describe('TailRing', () => {
  it('keeps the last maxBytes of any chunk sequence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9000 }),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 5000 }), { maxLength: 30 }),
        (maxBytes, chunks) => {
          const ring = new TailRing(maxBytes)
          let whole = Buffer.alloc(0)
          for (const chunk of chunks) {
            const buf = Buffer.from(chunk)
            ring.append(buf, 0, buf.length)
            whole = Buffer.concat([whole, buf])
          }
          const kept = whole.subarray(Math.max(0, whole.length - maxBytes))
          expect(ring.total).toBe(whole.length)
          expect(ring.retained).toBe(kept.length)
          expect(ring.windowStart).toBe(whole.length - kept.length)
          expect(windowOf(ring).equals(kept)).toBe(true)
          const parts: Buffer[] = []
          ring.forEachPart(ring.windowStart, ring.total, (b, s, e) => parts.push(Buffer.from(b.subarray(s, e))))
          expect(Buffer.concat(parts).equals(kept)).toBe(true)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('copies what it keeps: the caller may reuse its buffer at once', () => {
    const ring = new TailRing(8)
    const buf = Buffer.from('abcdef')
    ring.append(buf, 2, 6)
    buf.fill(0)
    expect(ring.slice(ring.windowStart, ring.total).toString()).toBe('cdef')
  })

  it('holds nothing with a zero cap but still counts the stream', () => {
    const ring = new TailRing(0)
    ring.append(Buffer.from('hello'), 0, 5)
    expect([ring.total, ring.retained, ring.slice(0, 0).length]).toEqual([5, 0, 0])
  })
})
