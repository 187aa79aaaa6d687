/**
 * Spawn + wait of `/bin/true` with stdout/stderr piped (stdin ignored). Every peer waits
 * for the exit AND for both pipes to close. Peers, interleaved in one process with the
 * order rotated each iteration (40 warm-up + 300 measured each by default):
 *
 *   startChild       cordon's native primitive (dist/subprocess/process/child.js), sockets resumed
 *   rt.pipe          LocalSubprocessRuntime.spawn, stdout/stderr 'pipe' (resumed, awaited)
 *   rt.collect       LocalSubprocessRuntime.spawn, stdout/stderr { maxBytes: 65536 }
 *   rt.supervise     rt.pipe with supervise: true (cordon-exec --supervise in between)
 *   node.spawn       child_process.spawn, stdio ['ignore','pipe','pipe'], awaiting 'close'
 *   execa            execa('/bin/true') (execa 9)
 *
 * Goal: cordon's public path (rt.pipe and rt.collect) ≤ 0.6× node.spawn. Also: the cost of
 * supervise relative to rt.pipe.
 *
 *   node --expose-gc bench/spawn.mjs            (SPAWN_WARMUP, SPAWN_ITERS, SPAWN_ROUNDS override)
 */
import { spawn as nodeSpawn } from 'node:child_process'
import { execa } from 'execa'
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
  usSince,
} from './lib.mjs'

requireBuilt()
const { startChild } = await dist('subprocess/process/child.js')
const { Slot } = await dist('subprocess/native.js')
const { LocalSubprocessRuntime } = await dist('index.js')

const WARMUP = Number(process.env.SPAWN_WARMUP ?? 30)
const ITERS = Number(process.env.SPAWN_ITERS ?? 120)
const ROUNDS = Number(process.env.SPAWN_ROUNDS ?? 3)
const TRUE = '/bin/true'
const envArray = Object.entries(process.env).map(([k, v]) => `${k}=${v}`)

const closed = (s) => (s === undefined || s.closed ? Promise.resolve() : new Promise((r) => s.once('close', r)))
function drainAndClose(s) {
  if (s === undefined) return Promise.resolve()
  s.resume()
  return closed(s)
}

const rt = new LocalSubprocessRuntime()
const pipeSpec = {
  argv: [TRUE],
  cwd: process.cwd(),
  stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  graceMs: 5000,
}
const collectSpec = {
  argv: [TRUE],
  cwd: process.cwd(),
  stdio: { stdin: 'ignore', stdout: { maxBytes: 65536 }, stderr: { maxBytes: 65536 } },
  graceMs: 5000,
}
const superviseSpec = { ...pipeSpec, supervise: true }

function check(exit, who) {
  if (exit.exitCode !== 0) throw new Error(`${who}: unexpected exit ${JSON.stringify(exit)}`)
}

async function runtimePipe(spec, who) {
  const t0 = now()
  const h = rt.spawn(spec)
  const [exit] = await Promise.all([h.done, drainAndClose(h.stdout), drainAndClose(h.stderr)])
  const us = usSince(t0)
  check(exit, who)
  return us
}

const peers = {
  startChild: async () => {
    const t0 = now()
    const c = startChild({ argv: [TRUE], env: envArray, stdio: [Slot.Null, Slot.Pipe, Slot.Pipe] })
    const [exit] = await Promise.all([c.exit, drainAndClose(c.stdout), drainAndClose(c.stderr)])
    const us = usSince(t0)
    check(exit, 'startChild')
    return us
  },
  'rt.pipe': () => runtimePipe(pipeSpec, 'rt.pipe'),
  'rt.collect': async () => {
    const t0 = now()
    const h = rt.spawn(collectSpec)
    const exit = await h.done // done waits for both collected pipes to close
    const us = usSince(t0)
    check(exit, 'rt.collect')
    h.collected.stdout.readFrom(0)
    return us
  },
  'rt.supervise': () => runtimePipe(superviseSpec, 'rt.supervise'),
  'node.spawn': () =>
    new Promise((resolve, reject) => {
      const t0 = now()
      const c = nodeSpawn(TRUE, [], { stdio: ['ignore', 'pipe', 'pipe'] })
      c.stdout.resume()
      c.stderr.resume()
      c.once('error', reject)
      c.once('close', (code) => {
        const us = usSince(t0)
        if (code !== 0) reject(new Error(`node.spawn exit ${code}`))
        else resolve(us)
      })
    }),
  execa: async () => {
    const t0 = now()
    const r = await execa(TRUE)
    const us = usSince(t0)
    if (r.exitCode !== 0) throw new Error('execa exit')
    return us
  },
}

gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
await rt.dispose()

console.log(
  `spawn+wait ${TRUE}, stdout/stderr piped, ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'node.spawn')
console.log()
console.log('goal: cordon (rt.pipe, rt.collect) ≤ 0.60× node.spawn; supervise cost reported relative to rt.pipe')
goalLine('spawn_runtime_pipe_vs_node', res.ratio('rt.pipe', 'node.spawn'), '<=', 0.6)
goalLine('spawn_runtime_collect_vs_node', res.ratio('rt.collect', 'node.spawn'), '<=', 0.6)
ratioLine('spawn_startChild_vs_node', res.ratio('startChild', 'node.spawn'))
ratioLine('spawn_execa_vs_node', res.ratio('execa', 'node.spawn'))
ratioLine('spawn_supervise_vs_runtime_pipe', res.ratio('rt.supervise', 'rt.pipe'))
