/**
 * Terminal spawn → first output: the time from asking for a terminal running `/bin/echo ready`
 * to its first chunk of output. Peers, interleaved in one process with the order rotated each
 * iteration (30 warm-up + 200 measured each by default); each then waits for its exit so no
 * session piles up:
 *
 *   cordon     LocalSubprocessRuntime.spawnTerminal (validation, env scrub, program lookup,
 *              session identity) and onData
 *   node-pty   node-pty's spawn with the same size and environment, and onData
 *
 * What cordon adds (~0.2 ms here): the zod check, the env scrub, the program lookup, and one
 * read of the leader's /proc stat right after the fork (its start time: the session's identity
 * against pid reuse), which waits while the child is in exec.
 *
 *   node --expose-gc bench/terminal.mjs            (TERM_WARMUP, TERM_ITERS override)
 */
import { createRequire } from 'node:module'
import {
  dist,
  fmt,
  gc,
  interleave,
  median,
  now,
  p90,
  printTable,
  ratioLine,
  requireBuilt,
  root,
  usSince,
} from './lib.mjs'

requireBuilt()
const { LocalSubprocessRuntime, scrubbedParentEnv } = await dist('index.js')
let pty
try {
  pty = createRequire(`${root}/package.json`)('node-pty')
} catch (error) {
  console.error(`bench/terminal: node-pty does not load (${error.message}); npm install node-pty@^1.1`)
  process.exit(2)
}

const WARMUP = Number(process.env.TERM_WARMUP ?? 30)
const ITERS = Number(process.env.TERM_ITERS ?? 200)
const PROGRAM = ['/bin/echo', 'ready']
const env = { ...scrubbedParentEnv(), TERM: 'dumb' }

const rt = new LocalSubprocessRuntime()

const peers = {
  cordon: async () => {
    const t0 = now()
    const t = await rt.spawnTerminal({
      argv: PROGRAM,
      cwd: '/',
      cols: 80,
      rows: 24,
      graceMs: 1000,
      env: { TERM: 'dumb' },
    })
    const us = await new Promise((resolve) => {
      const sub = t.onData(() => {
        sub.dispose()
        resolve(usSince(t0))
      })
    })
    const exit = await t.done
    if (exit.exitCode !== 0) throw new Error(`cordon: unexpected exit ${JSON.stringify(exit)}`)
    return us
  },
  'node-pty': async () => {
    const t0 = now()
    const p = pty.spawn(PROGRAM[0], PROGRAM.slice(1), { name: 'dumb', cols: 80, rows: 24, cwd: '/', env })
    const exited = new Promise((resolve) => p.onExit(resolve))
    const us = await new Promise((resolve) => {
      const sub = p.onData(() => {
        sub.dispose()
        resolve(usSince(t0))
      })
    })
    const exit = await exited
    if (exit.exitCode !== 0) throw new Error(`node-pty: unexpected exit ${JSON.stringify(exit)}`)
    return us
  },
}

gc()
const started = Date.now()
const samples = await interleave(peers, { warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
await rt.dispose()

const base = median(samples['node-pty'])
const rows = Object.entries(samples).map(([name, xs]) => [
  name,
  fmt(median(xs)),
  fmt(p90(xs)),
  fmt(Math.min(...xs)),
  fmt(median(xs) / base, 6, 2),
])
console.log(
  `terminal spawn → first output of ${PROGRAM.join(' ')}, ${WARMUP} warm-up + ${ITERS} measured per peer, interleaved (${seconds.toFixed(1)} s)`,
)
printTable(['peer', 'median µs', 'p90 µs', 'min µs', '×node-pty'], rows)
console.log()
ratioLine('terminal_first_output_cordon_vs_nodepty', median(samples.cordon) / base)
