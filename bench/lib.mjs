/**
 * Shared helpers for the plain-.mjs benchmarks: statistics, the interleaving loop and
 * table printing. Method (see /work/shared/reference/spawn-facts.md): every peer runs in
 * ONE process, interleaved, with the order rotated each iteration, after a warm-up;
 * report medians, p90 and RATIOS (absolute numbers do not carry across hosts).
 */
import { existsSync } from 'node:fs'
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

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Collects a GC if the process runs with --expose-gc. */
export function gc() {
  if (typeof globalThis.gc === 'function') globalThis.gc()
}
