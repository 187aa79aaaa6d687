import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OutputCollector, type OutputCollectorOptions } from '../../../src/subprocess/collect.js'
import { SpillDirectory } from '../../../src/subprocess/private-dirs/spill-dir.js'
import { invalid } from '../../support/invalid.js'

let parent: string
let spillDir: SpillDirectory
let spillDirCalls: number

beforeEach(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-collect-test-'))
  spillDir = new SpillDirectory({ parent })
  spillDirCalls = 0
})

afterEach(() => {
  spillDir.dispose()
  fs.rmSync(parent, { recursive: true, force: true })
})

function collector(options: Partial<OutputCollectorOptions> & { maxBytes: number }): OutputCollector {
  return new OutputCollector({
    stream: 'stdout',
    spillDir: () => {
      spillDirCalls += 1
      return spillDir.path()
    },
    ...options,
  })
}

/** Printable ASCII so text comparisons are byte comparisons. */
function ascii(n: number, seed = 0): Buffer {
  const b = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) b[i] = 33 + ((i * 7 + seed * 13 + ((i >> 5) ^ seed)) % 94)
  return b
}

function sha256(...bufs: Buffer[]): string {
  const h = createHash('sha256')
  for (const b of bufs) h.update(b)
  return h.digest('hex')
}

function fileSha256(file: string): string {
  const h = createHash('sha256')
  const fd = fs.openSync(file, 'r')
  const buf = Buffer.allocUnsafe(1 << 20)
  try {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null)
      if (n === 0) break
      h.update(buf.subarray(0, n))
    }
  } finally {
    fs.closeSync(fd)
  }
  return h.digest('hex')
}

function spillFiles(): string[] {
  if (!spillDir.created) return []
  return fs.readdirSync(spillDir.path())
}

describe('OutputCollector tail', () => {
  it('keeps the byte-exact tail across chunk shapes (small, large, over-cap)', () => {
    const sizes = [1, 3, 100, 700, 5000, 1, 1, 20000, 2, 511, 512, 513, 4096, 9, 70000, 3, 10]
    const c = collector({ maxBytes: 10_000 })
    const all: Buffer[] = []
    sizes.forEach((n, i) => {
      const b = ascii(n, i)
      all.push(b)
      c.push(b)
      const stream = Buffer.concat(all)
      const tail = stream.subarray(Math.max(0, stream.length - 10_000)).toString('latin1')
      expect(c.result().text).toBe(tail)
      expect(c.totalBytes).toBe(stream.length)
      expect(c.retainedBytes).toBe(Math.min(stream.length, 10_000))
    })
    expect(c.truncated).toBe(true)
  })

  it('exactly at the cap is not truncated and creates no spill', () => {
    const c = collector({ maxBytes: 1000, spill: { maxBytes: 10_000 } })
    c.push(ascii(400))
    c.push(ascii(600, 1))
    expect(c.result()).toEqual({ text: Buffer.concat([ascii(400), ascii(600, 1)]).toString(), truncated: false })
    expect(c.readFrom(0).lossy).toBe(false)
    expect(spillDirCalls).toBe(0)
    c.push(Buffer.from('!'))
    expect(c.result().truncated).toBe(true)
    expect(c.result().spillPath).toBeDefined()
    expect(spillDirCalls).toBe(1)
    c.finish()
  })

  it('a single chunk of exactly maxBytes is not truncated', () => {
    const c = collector({ maxBytes: 64 })
    c.push(ascii(64))
    expect(c.result()).toEqual({ text: ascii(64).toString(), truncated: false })
  })

  it('cuts forward to a UTF-8 boundary when the cut splits a character', () => {
    // '€' is 3 bytes, '😀' is 4 bytes.
    for (const ch of ['é', '€', '😀']) {
      const unit = Buffer.from(ch)
      const body = 5 * unit.length
      for (let cap = 1; cap <= body + 1; cap++) {
        const c = collector({ maxBytes: cap })
        const stream = Buffer.from(`ab${ch.repeat(5)}`)
        // push byte by byte so chunk boundaries split characters too
        for (const byte of stream) c.push(Buffer.from([byte]))
        const { text, truncated } = c.result()
        expect(truncated).toBe(true)
        expect(text).not.toContain('\uFFFD')
        const bytes = Buffer.byteLength(text)
        expect(bytes).toBeLessThanOrEqual(cap)
        // the text is the largest whole-character suffix that fits
        expect(bytes).toBe(cap > body ? cap : Math.floor(cap / unit.length) * unit.length)
        expect(stream.toString().endsWith(text)).toBe(true)
      }
    }
  })

  it('does not cut an untruncated stream that starts with continuation bytes', () => {
    const c = collector({ maxBytes: 10 })
    c.push(Buffer.from([0x80, 0x41]))
    expect(c.result().text).toBe('\uFFFDA')
  })

  it('maxBytes 0 keeps nothing', () => {
    const c = collector({ maxBytes: 0 })
    c.push(ascii(10))
    expect(c.result()).toEqual({ text: '', truncated: true })
    expect(c.readFrom(0)).toEqual({ text: '', nextOffset: 10, lossy: true })
    expect(c.readFrom(10)).toEqual({ text: '', nextOffset: 10, lossy: false })
  })

  it('matches a whole-stream model for arbitrary chunkings (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 700 }), { maxLength: 30 }),
        fc.nat(),
        (cap, chunks, offsetSeed) => {
          const c = collector({ maxBytes: cap })
          for (const ch of chunks) c.push(Buffer.from(ch))
          c.finish()
          const stream = Buffer.concat(chunks.map((x) => Buffer.from(x)))
          const tail = stream.subarray(Math.max(0, stream.length - cap))
          const truncated = stream.length > cap
          let skip = 0
          while (truncated && skip < 3 && skip < tail.length && (tail[skip]! & 0xc0) === 0x80) skip++
          expect(c.result()).toEqual({ text: tail.subarray(skip).toString(), truncated })
          const from = stream.length === 0 ? 0 : offsetSeed % (stream.length + 1)
          const read = c.readFrom(from)
          expect(read.nextOffset).toBe(stream.length)
          expect(read.lossy).toBe(from < stream.length - tail.length)
          if (!read.lossy && from === stream.length) expect(read.text).toBe('')
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('OutputCollector readers', () => {
  it('independent readers at different offsets never consume each other', () => {
    const c = collector({ maxBytes: 1000 })
    c.push(Buffer.from('hello '))
    const a1 = c.readFrom(0)
    expect(a1).toEqual({ text: 'hello ', nextOffset: 6, lossy: false })
    c.push(Buffer.from('world'))
    const b1 = c.readFrom(0)
    const a2 = c.readFrom(a1.nextOffset)
    const b2 = c.readFrom(3)
    expect(b1).toEqual({ text: 'hello world', nextOffset: 11, lossy: false })
    expect(a2).toEqual({ text: 'world', nextOffset: 11, lossy: false })
    expect(b2).toEqual({ text: 'lo world', nextOffset: 11, lossy: false })
    expect(c.readFrom(11)).toEqual({ text: '', nextOffset: 11, lossy: false })
    expect(c.readFrom(0).text).toBe('hello world') // still there
  })

  it('clamps offsets past the end and rejects invalid ones', () => {
    const c = collector({ maxBytes: 10 })
    c.push(Buffer.from('abc'))
    expect(c.readFrom(99)).toEqual({ text: '', nextOffset: 3, lossy: false })
    expect(invalid(() => c.readFrom(-1)).issues).toEqual(['fromByte: must be a non-negative integer, got -1'])
    invalid(() => c.readFrom(1.5))
    invalid(() => c.readFrom(Number.NaN))
  })

  it('holds back an incomplete trailing character until it completes or the stream ends', () => {
    const c = collector({ maxBytes: 100 })
    const euro = Buffer.from('€')
    c.push(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))
    const r1 = c.readFrom(0)
    expect(r1).toEqual({ text: 'a', nextOffset: 1, lossy: false })
    c.push(euro.subarray(2))
    expect(c.readFrom(r1.nextOffset)).toEqual({ text: '€', nextOffset: 4, lossy: false })
    c.push(euro.subarray(0, 1))
    expect(c.readFrom(4)).toEqual({ text: '', nextOffset: 4, lossy: false })
    c.finish()
    expect(c.readFrom(4)).toEqual({ text: '\uFFFD', nextOffset: 5, lossy: false })
  })

  it('a lossy read returns the whole retained tail and the spill path covering the gap', () => {
    const c = collector({ maxBytes: 100, spill: { maxBytes: 1_000_000 } })
    const stream = ascii(1000)
    c.push(stream.subarray(0, 50))
    const r1 = c.readFrom(0)
    expect(r1.lossy).toBe(false)
    expect(r1.spillPath).toBeUndefined()
    for (let i = 50; i < 1000; i += 50) c.push(stream.subarray(i, i + 50))
    const r2 = c.readFrom(r1.nextOffset)
    expect(r2.lossy).toBe(true)
    expect(r2.text).toBe(stream.subarray(900).toString())
    expect(r2.nextOffset).toBe(1000)
    expect(r2.spillPath).toBeDefined()
    // Even before finish, the spill covers every byte before nextOffset (gap recoverable).
    const gap = fs.readFileSync(r2.spillPath!).subarray(r1.nextOffset, 900)
    expect(gap.equals(stream.subarray(50, 900))).toBe(true)
    c.finish()
    expect(c.readFrom(0)).toEqual({
      text: stream.subarray(900).toString(),
      nextOffset: 1000,
      lossy: true,
      spillPath: r2.spillPath,
    })
  })
})

describe('OutputCollector spill', () => {
  it('holds the byte-identical whole stream, file 0600 in a 0700 dir, named per stream', () => {
    const c = new OutputCollector({
      maxBytes: 4096,
      spill: { maxBytes: 10_000_000 },
      spillDir: () => spillDir.path(),
      stream: 'stderr',
      pid: 4242,
    })
    const chunks: Buffer[] = []
    for (let i = 0; i < 400; i++) {
      const b = randomBytes(1 + ((i * 7919) % 9000))
      chunks.push(b)
      c.push(b)
    }
    c.finish()
    const res = c.result()
    expect(res.truncated).toBe(true)
    const file = res.spillPath!
    expect(path.dirname(file)).toBe(spillDir.path())
    expect(path.basename(file)).toMatch(/^cordon-4242-\d+-[0-9a-f]{12}-stderr\.log$/)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.statSync(spillDir.path()).mode & 0o777).toBe(0o700)
    expect(fileSha256(file)).toBe(sha256(...chunks))
    expect(c.spillPath).toBe(file)
  })

  it('gives each spill file a distinct name', () => {
    const names = new Set<string>()
    for (let i = 0; i < 5; i++) {
      const c = collector({ maxBytes: 1, spill: { maxBytes: 100 } })
      c.push(Buffer.from('ab'))
      c.finish()
      names.add(path.basename(c.spillPath!))
    }
    expect(names.size).toBe(5)
    for (const n of names) expect(n).toMatch(new RegExp(`^cordon-${process.pid}-\\d+-[0-9a-f]{12}-stdout\\.log$`))
  })

  it('discards (unlinks) the spill once the stream outgrows the spill cap', () => {
    const c = collector({ maxBytes: 100, spill: { maxBytes: 1000 } })
    c.push(ascii(600))
    const file = c.spillPath!
    expect(fs.existsSync(file)).toBe(true)
    c.push(ascii(400, 1)) // total 1000: exactly at the spill cap, kept
    expect(c.readFrom(0).spillPath).toBe(file)
    c.push(Buffer.from('x')) // 1001: over
    expect(fs.existsSync(file)).toBe(false)
    expect(c.spillPath).toBeUndefined()
    expect(c.readFrom(0).spillPath).toBeUndefined()
    c.push(ascii(5000, 2)) // spilling stays off; tail continues
    c.finish()
    expect(c.result()).toEqual({ text: ascii(5000, 2).subarray(4900).toString(), truncated: true })
    expect(spillFiles()).toEqual([])
  })

  it('creates no file when the first overflow already exceeds the spill cap', () => {
    const c = collector({ maxBytes: 100, spill: { maxBytes: 1000 } })
    c.push(ascii(50))
    c.push(ascii(2000))
    c.push(ascii(10))
    c.finish()
    expect(spillDirCalls).toBe(0)
    expect(spillDir.created).toBe(false)
    expect(c.result().spillPath).toBeUndefined()
    expect(c.result().truncated).toBe(true)
  })

  it('never spills without a spill option (diagnostic tail)', () => {
    const c = collector({ maxBytes: 10 })
    c.push(ascii(10_000))
    c.finish()
    expect(spillDirCalls).toBe(0)
    expect(c.result()).toEqual({ text: ascii(10_000).subarray(9990).toString(), truncated: true })
  })

  it('a spill directory failure disables the spill, not the tail', () => {
    const c = new OutputCollector({
      maxBytes: 10,
      spill: { maxBytes: 1000 },
      spillDir: () => {
        throw new Error('no dir')
      },
      stream: 'stdout',
    })
    c.push(ascii(20))
    c.push(ascii(20, 1))
    c.finish()
    expect(c.spillError?.message).toBe('no dir')
    expect(c.result()).toEqual({ text: ascii(20, 1).subarray(10).toString(), truncated: true })
  })

  it.runIf(fs.existsSync('/proc/self/fd'))('withholds the spill path when the final close fails', () => {
    const c = collector({ maxBytes: 10, spill: { maxBytes: 1_000_000 } })
    c.push(ascii(100))
    const file = c.spillPath!
    // Find the collector's descriptor and close it behind its back, then finish at once
    // (same tick, so the number cannot be reused in between).
    const fd = fs
      .readdirSync('/proc/self/fd')
      .map(Number)
      .find((n) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${n}`) === file
        } catch {
          return false
        }
      })
    expect(fd).toBeDefined()
    fs.closeSync(fd!)
    c.finish()
    expect(c.spillPath).toBeUndefined()
    expect(c.result().spillPath).toBeUndefined()
    expect(c.result().truncated).toBe(true)
    expect(c.spillError).toBeDefined()
    expect(fs.existsSync(file)).toBe(false)
  })

  it('ignores pushes after finish and finishes idempotently', () => {
    const c = collector({ maxBytes: 10, spill: { maxBytes: 100 } })
    c.push(ascii(20))
    c.finish()
    c.finish()
    c.push(ascii(5, 3))
    expect(c.totalBytes).toBe(20)
    expect(fs.statSync(c.spillPath!).size).toBe(20)
  })

  it('1 GB through a 64 KB cap: spill sha256 equals the stream, RSS stays flat', () => {
    const GiB = 1024 * 1024 * 1024
    const CHUNK = 64 * 1024
    const c = collector({ maxBytes: 64 * 1024, spill: { maxBytes: GiB } })
    const pattern = randomBytes(CHUNK + 4096)
    // Chunks rotate through 64 buffers (4 MiB), far more than the collector may hold
    // (maxBytes + one 256 KiB spill batch), so the RSS measured is the collector's, not
    // garbage from this generator; a retention bug would also break the hashes below.
    const pool = Array.from({ length: 64 }, () => Buffer.allocUnsafe(CHUNK))
    const streamHash = createHash('sha256')
    const rss0 = process.memoryUsage().rss
    let maxRss = rss0
    let i = 0
    let last = Buffer.alloc(0)
    for (let sent = 0; sent < GiB; sent += CHUNK, i++) {
      const chunk = pool[i % pool.length]!
      pattern.copy(chunk, 0, i % 4096, (i % 4096) + CHUNK)
      chunk.writeUInt32LE(i, 0)
      streamHash.update(chunk)
      c.push(chunk)
      last = chunk
      if ((i & 255) === 0) maxRss = Math.max(maxRss, process.memoryUsage().rss)
    }
    let skip = 0
    while (skip < 3 && (last[skip]! & 0xc0) === 0x80) skip++
    const expectedTail = last.toString('utf8', skip)
    c.finish()
    maxRss = Math.max(maxRss, process.memoryUsage().rss)
    const res = c.result()
    expect(c.totalBytes).toBe(GiB)
    expect(res.truncated).toBe(true)
    expect(res.text).toBe(expectedTail)
    expect(fs.statSync(res.spillPath!).size).toBe(GiB)
    expect(fileSha256(res.spillPath!)).toBe(streamHash.digest('hex'))
    const growthMb = (maxRss - rss0) / (1024 * 1024)
    expect(growthMb, `RSS grew ${growthMb.toFixed(1)} MB`).toBeLessThan(64)
  }, 180_000)
})
