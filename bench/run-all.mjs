/**
 * Runs every benchmark in sequence, each in its own `node --expose-gc` process, echoes their
 * tables and prints all `GOAL <name> <value> <op> <limit> PASS|MISS`, `RATIO <name> <value>` and
 * `SKIP <name> <why>` (a row this host could not fill) lines together at the end. A MISS is
 * reported, not a failure: the exit status is non-zero only when a benchmark itself failed (goals
 * live here, never in tests).
 *
 * A run of every benchmark then writes those lines as one table, with the date and the machine,
 * into bench/RESULTS.md (bench/results.mjs), replacing the previous table and keeping the notes around it.
 * A run of some benchmarks writes nothing unless --results=FILE names where: a partial table must
 * not replace the whole one.
 *
 *   npm run bench                     (= node bench/run-all.mjs)
 *   node bench/run-all.mjs --build    rebuild dist/ first even when it exists
 *   node bench/run-all.mjs spawn      run only the named benchmark(s)
 *   node bench/run-all.mjs env-scrub --results=/tmp/results.md   write that run's table to a file
 *
 * dist/ is built with `npx tsc -p tsconfig.build.json` when it is missing (or with --build).
 * The native addon is not rebuilt here (`npm run build:native`).
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { loadavgText, root } from './lib.mjs'
import { machineFacts, RESULTS_FILE, writeResults } from './results.mjs'

const BENCHES = [
  'spawn',
  'confined-spawn',
  'executor',
  'bwrap-path',
  'workspace-write',
  'startup',
  'throughput',
  'terminate',
  'env-scrub',
  'terminal',
  'terminal-confined',
  'network',
  'concurrent',
  'codex',
]
const args = process.argv.slice(2)
const forceBuild = args.includes('--build')
const selected = args.filter((a) => !a.startsWith('--'))
const resultsArg = args.find((a) => a.startsWith('--results='))
const resultsFile = resultsArg ? resultsArg.slice('--results='.length) : selected.length ? undefined : RESULTS_FILE
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
      if (/^(RATIO|GOAL|SKIP) /.test(line)) lines.push(line)
    })
    child.once('close', (code, signal) => resolve({ name, code, signal, lines }))
  })
}

const results = []
const t0 = Date.now()
const startDate = new Date()
const loadStart = loadavgText()
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
if (resultsFile) {
  writeResults(resultsFile, {
    date: startDate,
    machine: machineFacts(),
    seconds: Math.round((Date.now() - t0) / 1000),
    loadStart,
    loadEnd: loadavgText(),
    results,
  })
  console.log(`run-all: wrote the table to ${resultsFile}`)
} else {
  console.log('run-all: some benchmarks only: bench/RESULTS.md left as it was (--results=FILE writes this table)')
}
process.exitCode = failed ? 1 : 0
