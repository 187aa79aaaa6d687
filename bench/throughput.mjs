/**
 * Output throughput: 256 MiB of `head -c 268435456 /dev/zero` on stdout, interleaved rounds
 * (order rotated each round; ~7 by default), peers:
 *
 *   rt.spill      LocalSubprocessRuntime.spawn, stdout { maxBytes: 65536, spill: { maxBytes: 512 MiB } }
 *   rt.tail       same without spill (64 KiB tail only): separates the spill cost
 *   node.spawn    child_process.spawn reading the same pipe, counting bytes in 'data'
 *   startChild    cordon's primitive, counting bytes in 'data' (diagnostic: no collector; note
 *                 cordon's stdout is a pipe(2), libuv's child_process stdio is a socketpair)
 *
 * Time = spawn call → settled (h.done / 'close'). Goals: rt.spill ≥ 1.0× node MB/s, and host
 * RSS growth ≤ 16 MB during a cordon run (sampled every ms and on every 64th chunk for the
 * node peer; baseline taken after a gc when run with --expose-gc). Each cordon run gets its own
 * runtime, disposed right after it (outside the timed region) so its spill file is removed.
 *
 *   node --expose-gc bench/throughput.mjs        (TPUT_ROUNDS, TPUT_BYTES override)
 */
import { spawn as nodeSpawn } from 'node:child_process'
import {
  dist,
  fmt,
  gc,
  goalLine,
  median,
  noiseNote,
  now,
  printTable,
  ratioLine,
  requireBuilt,
  sleep,
  usSince,
} from './lib.mjs'

requireBuilt()
const { LocalSubprocessRuntime } = await dist('index.js')
const { startChild } = await dist('subprocess/process/child.js')
const { Slot } = await dist('subprocess/native.js')

const BYTES = Number(process.env.TPUT_BYTES ?? 268435456)
const ROUNDS = Number(process.env.TPUT_ROUNDS ?? 7)
const SPILL_MAX = 536870912
const argv = ['head', '-c', String(BYTES), '/dev/zero']
const rss = () => process.memoryUsage.rss()

/** Samples RSS every millisecond while `fn` runs; returns fn's value plus the peak RSS seen. */
async function withRssSampler(fn) {
  let peak = rss()
  const timer = setInterval(() => {
    const r = rss()
    if (r > peak) peak = r
  }, 1)
  try {
    const value = await fn((r) => {
      if (r > peak) peak = r
    })
    const r = rss()
    if (r > peak) peak = r
    return { value, peak }
  } finally {
    clearInterval(timer)
  }
}

function cordonPeer(withSpill) {
  return async () => {
    const rt = new LocalSubprocessRuntime()
    const stdout = withSpill ? { maxBytes: 65536, spill: { maxBytes: SPILL_MAX } } : { maxBytes: 65536 }
    const { value, peak } = await withRssSampler(async () => {
      const t0 = now()
      const h = rt.spawn({
        argv,
        cwd: process.cwd(),
        stdio: { stdin: 'ignore', stdout, stderr: { maxBytes: 65536 } },
        graceMs: 5000,
      })
      const exit = await h.done
      const us = usSince(t0)
      if (exit.exitCode !== 0) throw new Error(`cordon exit ${JSON.stringify(exit)}`)
      const read = h.collected.stdout.readFrom(0)
      if (read.nextOffset !== BYTES) throw new Error(`cordon: short stream ${read.nextOffset}`)
      if (withSpill && read.spillPath === undefined) throw new Error('cordon: no spill file')
      return us
    })
    await rt.dispose() // removes the spill directory
    return { us: value, peak }
  }
}

const nodePeer = async () => {
  const { value, peak } = await withRssSampler(
    (bump) =>
      new Promise((resolve, reject) => {
        const t0 = now()
        const c = nodeSpawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
        let n = 0
        let chunks = 0
        c.stdout.on('data', (chunk) => {
          n += chunk.length
          if ((++chunks & 63) === 0) bump(rss())
        })
        c.stderr.resume()
        c.once('error', reject)
        c.once('close', (code) => {
          const us = usSince(t0)
          if (code !== 0 || n !== BYTES) reject(new Error(`node: exit ${code}, ${n} bytes`))
          else resolve(us)
        })
      }),
  )
  return { us: value, peak }
}

const envArray = Object.entries(process.env).map(([k, v]) => `${k}=${v}`)
const rawPeer = async () => {
  const { value, peak } = await withRssSampler(async (bump) => {
    const t0 = now()
    const c = startChild({ argv, env: envArray, stdio: [Slot.Null, Slot.Pipe, Slot.Pipe] })
    let n = 0
    let chunks = 0
    c.stdout.on('data', (chunk) => {
      n += chunk.length
      if ((++chunks & 63) === 0) bump(rss())
    })
    c.stderr.resume()
    const closed = (s) => new Promise((r) => s.once('close', r))
    const [exit] = await Promise.all([c.exit, closed(c.stdout), closed(c.stderr)])
    const us = usSince(t0)
    if (exit.exitCode !== 0 || n !== BYTES) throw new Error(`startChild: exit ${JSON.stringify(exit)}, ${n} bytes`)
    return us
  })
  return { us: value, peak }
}

const peers = {
  'rt.spill': cordonPeer(true),
  'rt.tail': cordonPeer(false),
  'node.spawn': nodePeer,
  startChild: rawPeer,
}
const names = Object.keys(peers)
const res = Object.fromEntries(names.map((n) => [n, { mbps: [], growth: [] }]))

// One unmeasured warm-up round (page cache, JIT, first spill directory).
for (const n of names) await peers[n]()

gc()
const rss0 = rss()
const started = Date.now()
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length]
    gc()
    await sleep(20)
    const base = rss()
    const { us, peak } = await peers[name]()
    res[name].mbps.push(BYTES / 1e6 / (us / 1e6))
    res[name].growth.push((peak - base) / 1048576)
  }
}
gc()
const totalGrowth = (rss() - rss0) / 1048576
const seconds = (Date.now() - started) / 1000

const base = median(res['node.spawn'].mbps)
console.log(
  `${BYTES} bytes of /dev/zero on stdout, ${ROUNDS} interleaved rounds + 1 warm-up (${seconds.toFixed(1)} s); MB = 1e6 bytes`,
)
noiseNote(ROUNDS)
printTable(
  ['peer', 'median MB/s', 'p10 MB/s (=p90 time)', 'min MB/s', '×node', 'RSS growth max MiB', 'median MiB'],
  names.map((n) => {
    const xs = res[n].mbps
    const sorted = [...xs].sort((a, b) => a - b)
    return [
      n,
      fmt(median(xs)),
      fmt(sorted[Math.max(0, Math.ceil(0.1 * sorted.length) - 1)]),
      fmt(sorted[0]),
      fmt(median(xs) / base, 5, 2),
      fmt(Math.max(...res[n].growth), 5, 1),
      fmt(median(res[n].growth), 5, 1),
    ]
  }),
)
console.log(
  `process RSS after all rounds vs start (after gc): ${totalGrowth >= 0 ? '+' : ''}${totalGrowth.toFixed(1)} MiB`,
)
console.log()
console.log('goals: rt.spill ≥ 1.0× node.spawn MB/s; cordon RSS growth ≤ 16 MB per run')
goalLine('throughput_spill_vs_node', median(res['rt.spill'].mbps) / base, '>=', 1.0)
ratioLine('throughput_tail_vs_node', median(res['rt.tail'].mbps) / base)
ratioLine('throughput_startChild_raw_vs_node', median(res.startChild.mbps) / base)
const MB_PER_MIB = 1048576 / 1e6
goalLine('throughput_spill_rss_growth_mb', Math.max(...res['rt.spill'].growth) * MB_PER_MIB, '<=', 16)
goalLine('throughput_tail_rss_growth_mb', Math.max(...res['rt.tail'].growth) * MB_PER_MIB, '<=', 16)
