/**
 * Spawn + wait of `/bin/true` with stdout/stderr piped (stdin ignored). Every peer waits
 * for the exit AND for both pipes to close. Peers, interleaved in one process with the
 * order rotated each iteration (40 warm-up + 300 measured each by default):
 *
 *   startChild       cordon's native primitive (dist/subprocess/child.js), sockets resumed
 *   rt.pipe          LocalSubprocessRuntime.spawn, stdout/stderr 'pipe' (resumed, awaited)
 *   rt.collect       LocalSubprocessRuntime.spawn, stdout/stderr { maxBytes: 65536 }
 *   rt.supervise     rt.pipe with supervise: true (cordon-exec --supervise in between)
 *   node.spawn       child_process.spawn, stdio ['ignore','pipe','pipe'], awaiting 'close'
 *   execa            execa('/bin/true') (execa 9)
 *
 * Goal: cordon ≤ 0.6× node.spawn. Also: the cost of supervise relative to rt.pipe.
 *
 *   node --expose-gc bench/spawn.mjs            (SPAWN_WARMUP, SPAWN_ITERS override)
 */
import { spawn as nodeSpawn } from 'node:child_process'
import { execa } from 'execa'
import { dist, fmt, gc, interleave, median, now, p90, printTable, ratioLine, requireBuilt, usSince } from './lib.mjs'

requireBuilt()
const { startChild } = await dist('subprocess/child.js')
const { StdioKind } = await dist('subprocess/native.js')
const { LocalSubprocessRuntime } = await dist('index.js')

const WARMUP = Number(process.env.SPAWN_WARMUP ?? 40)
const ITERS = Number(process.env.SPAWN_ITERS ?? 300)
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
    const c = startChild({ argv: [TRUE], env: envArray, stdio: [StdioKind.Null, StdioKind.Pipe, StdioKind.Pipe] })
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
const samples = await interleave(peers, { warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
await rt.dispose()

const base = median(samples['node.spawn'])
const rows = Object.entries(samples).map(([name, xs]) => [
  name,
  fmt(median(xs)),
  fmt(p90(xs)),
  fmt(Math.min(...xs)),
  fmt(median(xs) / base, 6, 2),
])
console.log(
  `spawn+wait ${TRUE}, stdout/stderr piped, ${WARMUP} warm-up + ${ITERS} measured per peer, interleaved (${seconds.toFixed(1)} s)`,
)
printTable(['peer', 'median µs', 'p90 µs', 'min µs', '×node'], rows)

const m = (n) => median(samples[n])
console.log()
console.log('goal: cordon ≤ 0.60× node.spawn; supervise cost reported relative to rt.pipe')
ratioLine('spawn_startChild_vs_node', m('startChild') / base)
ratioLine('spawn_runtime_pipe_vs_node', m('rt.pipe') / base)
ratioLine('spawn_runtime_collect_vs_node', m('rt.collect') / base)
ratioLine('spawn_execa_vs_node', m('execa') / base)
ratioLine('spawn_supervise_vs_runtime_pipe', m('rt.supervise') / m('rt.pipe'))
