/**
 * Runs every benchmark in sequence, each in its own `node --expose-gc` process, echoes their
 * tables and prints all `GOAL <name> <value> <op> <limit> PASS|MISS` and `RATIO <name> <value>`
 * lines together at the end. A MISS is reported, not a failure: the exit status is non-zero only
 * when a benchmark itself failed (goals live here, never in tests).
 *
 *   npm run bench                     (= node bench/run-all.mjs)
 *   node bench/run-all.mjs --build    rebuild dist/ first even when it exists
 *   node bench/run-all.mjs spawn      run only the named benchmark(s)
 *
 * dist/ is built with `npx tsc -p tsconfig.build.json` when it is missing (or with --build).
 * The native addon is not rebuilt here (`npm run build:native`).
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { loadavgText, root } from './lib.mjs'

const BENCHES = [
  'spawn',
  'confined-spawn',
  'executor',
  'bwrap-path',
  'startup',
  'throughput',
  'terminate',
  'env-scrub',
  'terminal-confined',
]
const args = process.argv.slice(2)
const forceBuild = args.includes('--build')
const selected = args.filter((a) => !a.startsWith('--'))
for (const name of selected) {
  if (!BENCHES.includes(name)) {
    console.error(`run-all: unknown benchmark ${name} (known: ${BENCHES.join(', ')})`)
    process.exit(2)
  }
}
const benches = selected.length ? selected : BENCHES

if (forceBuild || !existsSync(join(root, 'dist', 'index.js'))) {
  console.log('run-all: building dist/ (npx tsc -p tsconfig.build.json)')
  const r = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) {
    console.error(`run-all: build failed (exit ${r.status})`)
    process.exit(1)
  }
}
if (!existsSync(join(root, 'build', 'Release', 'cordon.node'))) {
  console.error('run-all: build/Release/cordon.node is missing; run `npm run build:native` first')
  process.exit(1)
}

function run(name) {
  return new Promise((resolve) => {
    const file = join(root, 'bench', `${name}.mjs`)
    const child = spawn(process.execPath, ['--expose-gc', file], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
    const lines = []
    createInterface({ input: child.stdout }).on('line', (line) => {
      console.log(line)
      if (line.startsWith('RATIO ') || line.startsWith('GOAL ')) lines.push(line)
    })
    child.once('close', (code, signal) => resolve({ name, code, signal, lines }))
  })
}

const results = []
const t0 = Date.now()
console.log(
  `run-all: node ${process.version}, loadavg at start ${loadavgText()}; numbers are noisy on this shared 2-core machine: ratios are within-run medians of 3 interleaved rounds, absolute numbers are not comparable across runs`,
)
for (const name of benches) {
  console.log(`\n=== bench/${name}.mjs ===`)
  results.push(await run(name))
}

console.log(`\n=== summary (${((Date.now() - t0) / 1000).toFixed(0)} s, loadavg at end ${loadavgText()}) ===`)
let failed = 0
const goals = { PASS: 0, MISS: 0 }
for (const r of results) {
  if (r.code !== 0) {
    failed += 1
    console.log(`FAILED ${r.name} (exit ${r.code ?? r.signal})`)
  }
  for (const line of r.lines) {
    console.log(line)
    if (line.startsWith('GOAL ')) goals[line.endsWith(' PASS') ? 'PASS' : 'MISS'] += 1
  }
}
console.log(`goals: ${goals.PASS} PASS, ${goals.MISS} MISS (noisy: a MISS near its limit may be load)`)
process.exitCode = failed ? 1 : 0
