/**
 * CLI start-up (issue 12, "The CLI"): a whole `cordon` process, from spawn to 'close', against a
 * bare Node process. Each peer is a fresh `node` child with stdout/stderr piped and drained,
 * interleaved with the order rotated each iteration, 3 rounds (2 warm-up + 8 measured per peer
 * per round by default), cwd a fresh temp workspace:
 *
 *   node -e 0                     the floor: Node's own start-up and exit
 *   cordon --version              node bin/cordon.js --version: loading the CLI, nothing else
 *   cordon run -- true            the happy path (read-only, the host's first usable backend),
 *                                 the probe verdict cached on disk by an earlier run
 *   cordon run --reprobe -- true  the same, probing the chain again (a first run on a host)
 *   cordon probe --json           `cordon probe` (it always probes)
 *
 * Goal: cordon run -- true ≤ 1.5× node -e 0.
 *
 * Where the time goes (performance.now() marks inside one warm `cordon run -- true`, load ~1,
 * 2026-12-01, node -e 0 ≈ 48 ms): Node's boot to the bin ~45 ms; the bundle with its code cache
 * ~4 ms (without the cache ~11; the ~180 modules before the bundle and lazy zod: ~105-140);
 * module set-up to runVerb ~5; LocalSandbox.create (probe verdict from disk) ~4; the first plan
 * ~7 (the read view's listing ~2.5, seccomp and the ruleset ~2); spawn through a fresh launcher
 * ~5 (its exec, mount namespace and first supervisor); the command ~2; dispose ~2 (since then
 * the session dir is removed synchronously, without the thread pool: ~1.5 ms less in an A/B of
 * whole runs, not marked on its own).
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
const first = spawnSync(node, [cli, 'run', '--', 'true'], { cwd: workspace, encoding: 'utf8' })
if (first.status !== 0) {
  console.error(`bench/startup: \`cordon run -- true\` fails here (exit ${first.status}): ${first.stderr}`)
  process.exit(2)
}

const peers = {
  'node -e 0': run(['-e', '0']),
  'cordon --version': run([cli, '--version']),
  // The probe verdict cached on disk by the previous run: what a person's second command costs.
  'cordon run -- true': run([cli, 'run', '--', 'true']),
  'cordon run --reprobe -- true': run([cli, 'run', '--reprobe', '--', 'true']),
  'cordon probe --json': run([cli, 'probe', '--json']),
}
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
rmSync(workspace, { recursive: true, force: true })

console.log(
  `startup: whole processes, spawn → 'close'; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'node -e 0')
console.log()
console.log('goal (issue 12): cordon run -- true ≤ 1.5× node -e 0')
goalLine('startup_run_true_vs_node', res.ratio('cordon run -- true', 'node -e 0'), '<=', 1.5)
ratioLine('startup_version_vs_node', res.ratio('cordon --version', 'node -e 0'))
ratioLine('startup_run_reprobe_vs_node', res.ratio('cordon run --reprobe -- true', 'node -e 0'))
ratioLine('startup_probe_vs_node', res.ratio('cordon probe --json', 'node -e 0'))
