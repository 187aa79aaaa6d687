/**
 * OutputCollector throughput against its peer measured in the same run: Node simply
 * reading the same pipe. 256 MiB of `head -c … /dev/zero` per run, through a 64 KiB tail
 * with a 512 MiB spill (spill directory under os.tmpdir()) and through the tail alone.
 * The variants run in interleaved rounds (rotating order) because on a small VM the
 * background writeback of one run's spill slows whichever run comes next; the printed
 * table gives median MiB/s, the ratio to the peer, and the peak host RSS growth.
 *
 *   npx vitest bench bench/collect.bench.ts --run
 */
import { spawn } from 'node:child_process'
import { unlinkSync } from 'node:fs'
import { bench, describe } from 'vitest'
import { OutputCollector } from '../src/subprocess/collect.js'
import { SpillDirectory } from '../src/subprocess/private-dirs/spill-dir.js'

const STREAM_BYTES = 256 * 1024 * 1024
const ROUNDS = Number(process.env.COLLECT_BENCH_ROUNDS ?? 9)

/** Streams STREAM_BYTES from a child through `onChunk`; resolves with seconds and peak RSS. */
function pump(onChunk: (chunk: Buffer) => void): Promise<{ seconds: number; peakRss: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    let peakRss = process.memoryUsage().rss
    const child = spawn('head', ['-c', String(STREAM_BYTES), '/dev/zero'], { stdio: ['ignore', 'pipe', 'ignore'] })
    let n = 0
    let chunks = 0
    child.stdout.on('data', (chunk: Buffer) => {
      n += chunk.length
      onChunk(chunk)
      if ((++chunks & 63) === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss)
    })
    child.once('error', reject)
    child.stdout.once('end', () => {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9
      if (n === STREAM_BYTES) resolve({ seconds, peakRss })
      else reject(new Error(`short read: ${n}`))
    })
  })
}

type Variant = { name: string; run: () => Promise<{ seconds: number; peakRss: number }> }

function variants(spillDir: SpillDirectory): Variant[] {
  return [
    { name: 'node reads the pipe (peer)', run: () => pump(() => {}) },
    {
      name: 'OutputCollector 64 KiB tail + 512 MiB spill',
      run: async () => {
        const c = new OutputCollector({
          maxBytes: 64 * 1024,
          spill: { maxBytes: 512 * 1024 * 1024 },
          spillDir: () => spillDir.path(),
          stream: 'stdout',
        })
        const r = await pump((chunk) => c.push(chunk))
        const t0 = process.hrtime.bigint()
        c.finish()
        const file = c.result().spillPath
        const finishSeconds = Number(process.hrtime.bigint() - t0) / 1e9
        if (file === undefined) throw new Error('expected a spill file')
        unlinkSync(file)
        return { seconds: r.seconds + finishSeconds, peakRss: r.peakRss }
      },
    },
    {
      name: 'OutputCollector 64 KiB tail only',
      run: async () => {
        const c = new OutputCollector({ maxBytes: 64 * 1024, stream: 'stdout' })
        const r = await pump((chunk) => c.push(chunk))
        c.finish()
        return r
      },
    },
  ]
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

describe('256 MiB of stdout, interleaved rounds', () => {
  bench(
    'peer vs OutputCollector',
    async () => {
      const spillDir = new SpillDirectory()
      try {
        const list = variants(spillDir)
        const rssBase = process.memoryUsage().rss
        const seconds = list.map(() => [] as number[])
        const peak = list.map(() => rssBase)
        await list[0]!.run() // warm-up
        for (let round = 0; round < ROUNDS; round++) {
          for (let k = 0; k < list.length; k++) {
            const i = (round + k) % list.length
            const r = await list[i]!.run()
            seconds[i]!.push(r.seconds)
            peak[i] = Math.max(peak[i]!, r.peakRss)
          }
        }
        const mibps = seconds.map((s) => STREAM_BYTES / 1048576 / median(s))
        const rows = list.map((v, i) => ({
          variant: v.name,
          'median MiB/s': Math.round(mibps[i]!),
          'x peer': +(mibps[i]! / mibps[0]!).toFixed(2),
          'peak RSS growth MiB': +((peak[i]! - rssBase) / 1048576).toFixed(1),
        }))
        console.table(rows)
      } finally {
        spillDir.dispose()
      }
    },
    { iterations: 1, warmupIterations: 0, time: 0 },
  )
})
