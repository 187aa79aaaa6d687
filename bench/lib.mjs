/**
 * Shared helpers for the plain-.mjs benchmarks: statistics, the interleaving loop and
 * table printing. Method: every peer runs in ONE process, interleaved, with the order rotated
 * each iteration, after a warm-up; report medians, p90 and RATIOS (absolute numbers do not carry across hosts).
 */
import { spawn as nodeSpawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { dirname, join } from 'node:path'

/** The package under test: this checkout, or CORDON_ROOT (an A/B copy with a patched dist/). */
export const root = process.env.CORDON_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..')

/** Imports `dist/<rel>` of the package under test. */
export const dist = (rel) => import(pathToFileURL(join(root, 'dist', rel)).href)

/** Fails early with a clear message when dist/ or the addon is missing. */
export function requireBuilt() {
  const missing = []
  if (!existsSync(join(root, 'dist', 'index.js'))) missing.push('dist/index.js (run `npx tsc -p tsconfig.build.json`)')
  if (!existsSync(join(root, 'build', 'Release', 'cordon.node')))
    missing.push('build/Release/cordon.node (run `npm run build:native`)')
  if (missing.length) {
    console.error(`bench: missing ${missing.join(' and ')}`)
    process.exit(2)
  }
}

export const now = () => process.hrtime.bigint()
/** Microseconds since `t0` (a bigint from now()). */
export const usSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e3

/** Quantile q (0..1) of a numeric array, nearest-rank on a sorted copy. */
export function quantile(xs, q) {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))
  return s[i]
}
export const median = (xs) => quantile(xs, 0.5)
export const p90 = (xs) => quantile(xs, 0.9)

/**
 * Runs every peer `warmup + iterations` times, interleaved: in iteration i the peers run
 * in the order rotated by i. Each peer is an async function that returns the sample
 * (µs or whatever it measures). Returns { name: samples[] } for the measured iterations.
 */
export async function interleave(peers, { warmup, iterations, between } = {}) {
  const names = Object.keys(peers)
  const samples = Object.fromEntries(names.map((n) => [n, []]))
  const total = warmup + iterations
  for (let i = 0; i < total; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length]
      const value = await peers[name]()
      if (i >= warmup) samples[name].push(value)
      if (between) await between()
    }
  }
  return samples
}

/** Formats a number with `digits` decimals, right-aligned to `width`. */
export const fmt = (x, width = 9, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : String(x)).padStart(width)

/** Prints a table: rows of [label, ...cells] with a header. */
export function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')
  console.log(line(header))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const r of rows) console.log(line(r))
}

/** The grep-able summary line. */
export function ratioLine(name, value) {
  console.log(`RATIO ${name} ${Number.isFinite(value) ? value.toFixed(3) : 'NaN'}`)
}

/**
 * The grep-able line of a row this run could not fill, saying why (the table shows the reason in
 * its place): `SKIP <name> <why>`.
 */
export function skipLine(name, why) {
  console.log(`SKIP ${name} ${String(why).replace(/\s+/g, ' ').trim()}`)
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Collects a GC if the process runs with --expose-gc. */
export function gc() {
  if (typeof globalThis.gc === 'function') globalThis.gc()
}

/** The load average as "1m 5m 15m". */
export const loadavgText = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

/**
 * Runs `interleave` `rounds` times (each round with its own warm-up, so a round that lands on a
 * busy moment of this shared machine is outvoted by the other two) and summarises:
 *   median(name)   the median over rounds of that round's median (µs)
 *   p90(name)      the median over rounds of that round's p90
 *   ratio(a, b)    the median over rounds of (round median a / round median b): both peers of a
 *                  ratio always come from the same round, interleaved
 *   spread(a, b)   "lo–hi" of the per-round ratios
 */
export async function measureRounds(peers, { rounds = 3, warmup, iterations, between } = {}) {
  const perRound = []
  for (let r = 0; r < rounds; r++) perRound.push(await interleave(peers, { warmup, iterations, between }))
  const roundStat = (name, stat) => perRound.map((s) => stat(s[name]))
  const roundRatios = (a, b) => perRound.map((s) => median(s[a]) / median(s[b]))
  return {
    rounds,
    names: Object.keys(peers),
    median: (name) => median(roundStat(name, median)),
    p90: (name) => median(roundStat(name, p90)),
    min: (name) => Math.min(...roundStat(name, (xs) => Math.min(...xs))),
    ratio: (a, b) => median(roundRatios(a, b)),
    spread: (a, b) => {
      const xs = roundRatios(a, b)
      return `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`
    },
  }
}

/**
 * Prints the grep-able goal line `GOAL <name> <value> <op> <limit> PASS|MISS` (op `<=` or `>=`)
 * and returns whether it passed. Goals live here, never in tests.
 */
export function goalLine(name, value, op, limit) {
  const pass = Number.isFinite(value) && (op === '>=' ? value >= limit : value <= limit)
  const shown = Number.isFinite(value) ? value.toFixed(3) : 'NaN'
  console.log(`GOAL ${name} ${shown} ${op} ${limit} ${pass ? 'PASS' : 'MISS'}`)
  return pass
}

/** The line every benchmark prints once: what the numbers are worth on this machine. */
export function noiseNote(rounds) {
  console.log(
    `note: numbers are noisy (2 cores shared with other sessions; loadavg ${loadavgText()}); ratios are the median of ${rounds} interleaved rounds, peers side by side in one process; absolute µs do not carry across runs`,
  )
}

/** Prints a measureRounds result: median µs, p90 µs, min µs and the ratio (with its spread) to peer `base`. */
export function printRounds(res, base, names = res.names) {
  printTable(
    ['peer', 'median µs', 'p90 µs', 'min µs', `× ${base}`, 'per-round ×'],
    names.map((n) => [
      n,
      fmt(res.median(n)),
      fmt(res.p90(n)),
      fmt(res.min(n)),
      fmt(res.ratio(n, base), 6, 3),
      res.spread(n, base),
    ]),
  )
}

/**
 * Node's own spawn as a peer: child_process.spawn with every listed stdio slot, each pipe
 * resumed, until 'close' (the exit AND every pipe closed). Resolves with µs; rejects on a
 * non-zero exit.
 */
export function timeNodeSpawn(file, args, options = {}) {
  return new Promise((resolve, reject) => {
    const t0 = now()
    const c = nodeSpawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options })
    for (const s of c.stdio) s?.resume?.()
    c.once('error', reject)
    c.once('close', (code, signal) => {
      const us = usSince(t0)
      if (code !== 0) reject(new Error(`${file} ${args.join(' ')}: exit ${code ?? signal}`))
      else resolve(us)
    })
  })
}

/**
 * The executor's public path once: `executor.run(executor.resolve({ command: 'true' }))`, in µs;
 * throws when the run failed or carries no sandbox facts (`who` names it).
 */
export async function timeExecutorRun(executor, who) {
  const t0 = now()
  const r = await executor.run(executor.resolve({ command: 'true' }))
  const us = usSince(t0)
  if (r.exitCode !== 0 || r.sandbox === undefined) throw new Error(`${who}: unexpected result ${JSON.stringify(r)}`)
  return us
}

/** Exits the benchmark `who` (status 2, saying why) when `sandbox`'s `backend` is unusable here. */
export function requireUsable(sandbox, backend, who) {
  const cap = sandbox.capabilities.backends[backend]
  if (cap?.usable) return
  console.error(`bench/${who}: ${backend} is unusable here: ${cap?.reason}`)
  process.exit(2)
}
