/**
 * Terminate → settled latency for a cooperative child (`sleep 100`, graceMs 5000). Each
 * iteration starts the child, waits until /proc/<pid>/comm reads 'sleep' and at least 5 ms
 * have passed (so it has exec'd), then times from the kill call to settlement. Peers,
 * interleaved with the order rotated each iteration, 3 rounds (10 warm-up + 60 measured per peer
 * per round by default):
 *
 *   rt.collect     rt.spawn, stdout/stderr { maxBytes: 65536 }; h.terminate(); await h.done
 *   rt.pipe        rt.spawn, stdout/stderr 'pipe' (resumed);     h.terminate(); await h.done
 *   startChild     native primitive; c.kill('SIGTERM'); await c.exit (lower bound for cordon)
 *   node.exit      child_process.spawn, stdio ['ignore','pipe','pipe']; child.kill(); 'exit' event
 *   node.close     same, until 'close' (pipes closed too: what rt.collect's done waits for)
 *
 * Goal: rt.collect ≤ 1.5× node.exit.
 *
 *   node --expose-gc bench/terminate.mjs          (TERM_WARMUP, TERM_ITERS, TERM_ROUNDS override)
 */
import { spawn as nodeSpawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import {
  dist,
  gc,
  goalLine,
  measureRounds,
  noiseNote,
  now,
  printRounds,
  ratioLine,
  requireBuilt,
  sleep,
  usSince,
} from './lib.mjs'

requireBuilt()
const { startChild } = await dist('subprocess/process/child.js')
const { Slot } = await dist('subprocess/native.js')
const { LocalSubprocessRuntime } = await dist('index.js')

const WARMUP = Number(process.env.TERM_WARMUP ?? 10)
const ITERS = Number(process.env.TERM_ITERS ?? 60)
const ROUNDS = Number(process.env.TERM_ROUNDS ?? 3)
const SLEEP = ['sleep', '100']
const envArray = Object.entries(process.env).map(([k, v]) => `${k}=${v}`)

function comm(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'latin1').trim()
  } catch {
    return ''
  }
}
/** Resolves once `pid` runs `sleep` and at least 5 ms passed since `t0` (ms timestamp). */
async function execd(pid, t0) {
  for (let i = 0; i < 2000; i++) {
    if (comm(pid) === 'sleep' && Date.now() - t0 >= 5) return
    await sleep(1)
  }
  throw new Error(`pid ${pid} never exec'd sleep`)
}
const closed = (s) => (s === undefined || s.closed ? Promise.resolve() : new Promise((r) => s.once('close', r)))

const rt = new LocalSubprocessRuntime()
const spec = (stdout) => ({
  argv: SLEEP,
  cwd: process.cwd(),
  stdio: { stdin: 'ignore', stdout, stderr: stdout },
  graceMs: 5000,
})
const collectSpec = spec({ maxBytes: 65536 })
const pipeSpec = spec('pipe')

function expectTerm(exit, who) {
  if (exit.signal !== 'SIGTERM') throw new Error(`${who}: expected SIGTERM, got ${JSON.stringify(exit)}`)
}

async function runtimePeer(s, who) {
  const started = Date.now()
  const h = rt.spawn(s)
  h.stdout?.resume()
  h.stderr?.resume()
  await execd(h.pid, started)
  const t0 = now()
  h.terminate()
  const exit = await h.done
  const us = usSince(t0)
  expectTerm(exit, who)
  await Promise.all([closed(h.stdout), closed(h.stderr)])
  return us
}

function nodePeer(until) {
  return async () => {
    const started = Date.now()
    const c = nodeSpawn(SLEEP[0], SLEEP.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
    c.stdout.resume()
    c.stderr.resume()
    const exited = new Promise((r) => c.once('exit', (_code, signal) => r({ t: now(), signal })))
    const closedEv = new Promise((r) => c.once('close', () => r({ t: now() })))
    await execd(c.pid, started)
    const t0 = now()
    c.kill()
    const ev = until === 'exit' ? await exited : await closedEv
    const us = Number(ev.t - t0) / 1e3
    const { signal } = await exited
    if (signal !== 'SIGTERM') throw new Error(`node: expected SIGTERM, got ${signal}`)
    await closedEv
    return us
  }
}

const peers = {
  'rt.collect': () => runtimePeer(collectSpec, 'rt.collect'),
  'rt.pipe': () => runtimePeer(pipeSpec, 'rt.pipe'),
  startChild: async () => {
    const started = Date.now()
    const c = startChild({ argv: SLEEP, env: envArray, stdio: [Slot.Null, Slot.Pipe, Slot.Pipe] })
    c.stdout.resume()
    c.stderr.resume()
    await execd(c.pid, started)
    const t0 = now()
    c.kill('SIGTERM')
    const exit = await c.exit
    const us = usSince(t0)
    expectTerm(exit, 'startChild')
    await Promise.all([closed(c.stdout), closed(c.stderr)])
    return us
  },
  'node.exit': nodePeer('exit'),
  'node.close': nodePeer('close'),
}

gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
await rt.dispose()

console.log(
  `terminate → settled, cooperative \`sleep 100\`, ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'node.exit')
console.log()
console.log('goal: rt.collect (terminate → done) ≤ 1.5× node.exit (kill → exit)')
goalLine('terminate_runtime_collect_vs_node_exit', res.ratio('rt.collect', 'node.exit'), '<=', 1.5)
ratioLine('terminate_runtime_pipe_vs_node_exit', res.ratio('rt.pipe', 'node.exit'))
ratioLine('terminate_startChild_vs_node_exit', res.ratio('startChild', 'node.exit'))
ratioLine('terminate_runtime_collect_vs_node_close', res.ratio('rt.collect', 'node.close'))
