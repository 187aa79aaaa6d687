/**
 * CLI start-up (issue 12, "The CLI"): a whole `cordon` process, from spawn to 'close', against a
 * bare Node process. Each peer is a fresh `node` child with stdout/stderr piped and drained,
 * interleaved with the order rotated each iteration, 3 rounds (2 warm-up + 8 measured per peer
 * per round by default), cwd a fresh temp workspace:
 *
 *   node -e 0             the floor: Node's own start-up and exit
 *   cordon --version      node bin/cordon.js --version: loading the CLI's modules, nothing else
 *   cordon run -- true    node bin/cordon.js run -- true: the happy path (read-only, the host's
 *                         first usable backend, probe included)
 *   cordon probe --json   node bin/cordon.js probe --json; with an on-disk probe cache (a
 *                         `--reprobe` flag in `cordon probe --help`) it becomes two rows, cold
 *                         (--reprobe) and warm (cache filled by the previous run)
 *
 * Goal: cordon run -- true ≤ 1.5× node -e 0.
 *
 * Where the time went when this was written (performance.now() inside one `cordon run -- true`,
 * load 8-15): Node's boot ~50 ms; importing dist/cli/main.js ~105-140 ms (180 modules: 95 of zod,
 * 84 of dist; `import('zod')` alone ~40 ms); probing both backends of the chain (Landlock and
 * bubblewrap canaries, no on-disk cache) ~65-95 ms; the confined run itself ~20-35 ms.
 *
 *   node bench/startup.mjs      (STARTUP_WARMUP, STARTUP_ITERS, STARTUP_ROUNDS override)
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  goalLine,
  measureRounds,
  noiseNote,
  printRounds,
  ratioLine,
  requireBuilt,
  root,
  timeNodeSpawn,
} from './lib.mjs'

requireBuilt()
const WARMUP = Number(process.env.STARTUP_WARMUP ?? 2)
const ITERS = Number(process.env.STARTUP_ITERS ?? 8)
const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 3)
const node = process.execPath
const cli = join(root, 'bin', 'cordon.js')
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-startup-')))

const run = (args) => () => timeNodeSpawn(node, args, { cwd: workspace })
const probeHelp = spawnSync(node, [cli, 'probe', '--help'], { encoding: 'utf8' }).stdout ?? ''
const probeCache = probeHelp.includes('--reprobe')
const first = spawnSync(node, [cli, 'run', '--', 'true'], { cwd: workspace, encoding: 'utf8' })
if (first.status !== 0) {
  console.error(`bench/startup: \`cordon run -- true\` fails here (exit ${first.status}): ${first.stderr}`)
  process.exit(2)
}

const peers = {
  'node -e 0': run(['-e', '0']),
  'cordon --version': run([cli, '--version']),
  'cordon run -- true': run([cli, 'run', '--', 'true']),
  ...(probeCache
    ? {
        'cordon probe --json (cold)': run([cli, 'probe', '--json', '--reprobe']),
        'cordon probe --json (warm)': run([cli, 'probe', '--json']),
      }
    : { 'cordon probe --json': run([cli, 'probe', '--json']) }),
}
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
rmSync(workspace, { recursive: true, force: true })

console.log(
  `startup: whole processes, spawn → 'close'; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
if (!probeCache)
  console.log(
    'note: no on-disk probe cache exists yet (src/sandbox/probe.ts caches per process only; `cordon probe` has no --reprobe): every cordon process probes, so probe cold = warm and one row is shown',
  )
printRounds(res, 'node -e 0')
console.log()
console.log('goal (issue 12): cordon run -- true ≤ 1.5× node -e 0')
goalLine('startup_run_true_vs_node', res.ratio('cordon run -- true', 'node -e 0'), '<=', 1.5)
ratioLine('startup_version_vs_node', res.ratio('cordon --version', 'node -e 0'))
if (probeCache) {
  ratioLine('startup_probe_cold_vs_node', res.ratio('cordon probe --json (cold)', 'node -e 0'))
  ratioLine('startup_probe_warm_vs_node', res.ratio('cordon probe --json (warm)', 'node -e 0'))
} else ratioLine('startup_probe_vs_node', res.ratio('cordon probe --json', 'node -e 0'))
