/**
 * 200 concurrent runs (issue 28): a batch of CONC_RUNS runs of `bash -c true` started at once,
 * timed from the first start to the last end. Peers, one batch each in turn with the order
 * rotated each iteration, 3 rounds (1 warm-up + 2 measured batches per peer per round):
 *
 *   node.bash              child_process.spawn('bash', ['-c', 'true']) ×200, pipes resumed,
 *                          until every 'close': the peer of the first ratios
 *   executor.ro.landlock   executor.run(executor.resolve({ command: 'true' })) ×200, read-only on
 *                          Landlock (the public path, lifetime containment included)
 *   executor.ww.bwrap      the same in workspace-write on bubblewrap (the plan's resident instance)
 *   bwrap.bare             child_process.spawn of `bwrap --ro-bind / / --dev /dev --proc /proc
 *                          --die-with-parent -- bash -c true` ×200 (a row that cannot run says why)
 *
 * Then, apart (its batch is ~10× the others', so it gets fewer), executor.ww.bwrap against:
 *
 *   sandbox-runtime.ww     Anthropic's sandbox-runtime through its library: wrapWithSandbox and a
 *                          shell spawn of the result ×200 (bench/npm-cache.mjs installs it into
 *                          ~/.cache/cordon-bench; a row that cannot run says why), 3 rounds of one
 *                          batch each
 *
 * No goal: the ratios say what concurrency costs each path against the same batch of Node's own
 * spawns and of the bwrap peers, on this 2-core host.
 *
 *   node --expose-gc bench/concurrent.mjs   (CONC_RUNS, CONC_WARMUP, CONC_ITERS, CONC_ROUNDS,
 *                                           CONC_SRT_ITERS override; CONC_SKIP_SRT=1 skips
 *                                           sandbox-runtime)
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  dist,
  gc,
  measureRounds,
  noiseNote,
  now,
  printRounds,
  ratioLine,
  requireBuilt,
  requireUsable,
  skipLine,
  timeNodeSpawn,
  usSince,
} from './lib.mjs'
import { SRT_VERSION, sandboxRuntime, timeSandboxRuntime } from './npm-cache.mjs'

requireBuilt()
const { LocalSandbox, LocalShellExecutor, LocalSubprocessRuntime } = await dist('index.js')

const RUNS = Number(process.env.CONC_RUNS ?? 200)
const WARMUP = Number(process.env.CONC_WARMUP ?? 1)
const ITERS = Number(process.env.CONC_ITERS ?? 2)
const SRT_ITERS = Number(process.env.CONC_SRT_ITERS ?? 1)
const ROUNDS = Number(process.env.CONC_ROUNDS ?? 3)
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-conc-')))

const rt = new LocalSubprocessRuntime()
const landlock = await LocalSandbox.create({ backends: ['landlock'] })
const bwrap = await LocalSandbox.create({ backends: ['bubblewrap'] })
requireUsable(landlock, 'landlock', 'concurrent')
requireUsable(bwrap, 'bubblewrap', 'concurrent')
const executorOn = (sandbox, defaultMode) =>
  new LocalShellExecutor({ cwd: workspace, workspaceRoot: workspace, sandbox, subprocess: rt, defaultMode })
const roExecutor = executorOn(landlock, 'read-only')
const wwExecutor = executorOn(bwrap, 'workspace-write')

const bareArgs = [
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--die-with-parent',
  '--',
  'bash',
  '-c',
  'true',
]
const bare = spawnSync('bwrap', bareArgs, { stdio: 'ignore' })
const bareWhy =
  bare.status === 0 ? undefined : `bare bwrap fails here (${bare.error?.message ?? `exit ${bare.status}`})`
if (bareWhy) console.log(`bench/concurrent: ${bareWhy}; its rows are skipped`)

const srt = process.env.CONC_SKIP_SRT ? 'skipped (CONC_SKIP_SRT)' : await sandboxRuntime(workspace)
if (typeof srt === 'string') console.log(`bench/concurrent: sandbox-runtime ${SRT_VERSION} row skipped: ${srt}`)

/** One run of the executor's public path; throws unless it exited 0 with sandbox facts. */
async function executorRun(executor, who) {
  const r = await executor.run(executor.resolve({ command: 'true' }))
  if (r.exitCode !== 0 || r.sandbox === undefined) throw new Error(`${who}: unexpected result ${JSON.stringify(r)}`)
}

/** RUNS of `one` started together; µs until the last is done. */
async function batch(one) {
  const t0 = now()
  await Promise.all(Array.from({ length: RUNS }, one))
  return usSince(t0)
}

const peers = {
  'node.bash': () => batch(() => timeNodeSpawn('bash', ['-c', 'true'], { cwd: workspace })),
  'executor.ro.landlock': () => batch(() => executorRun(roExecutor, 'executor.ro.landlock')),
  'executor.ww.bwrap': () => batch(() => executorRun(wwExecutor, 'executor.ww.bwrap')),
  ...(bareWhy ? {} : { 'bwrap.bare': () => batch(() => timeNodeSpawn('bwrap', bareArgs, { cwd: workspace })) }),
}

gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
const srtRes =
  typeof srt === 'string'
    ? undefined
    : await measureRounds(
        {
          'executor.ww.bwrap': peers['executor.ww.bwrap'],
          'sandbox-runtime.ww': () => batch(() => timeSandboxRuntime(srt, 'bash -c true', workspace)),
        },
        { rounds: ROUNDS, warmup: 0, iterations: SRT_ITERS, between: gc },
      )
const seconds = (Date.now() - started) / 1000
await roExecutor.dispose()
await wwExecutor.dispose()
await srt?.reset?.()
await rt.dispose()
await landlock.dispose()
await bwrap.dispose()
rmSync(workspace, { recursive: true, force: true })

console.log(
  `concurrent: batches of ${RUNS} runs of bash -c true started together, first start to last end; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) batches per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'node.bash')
const perRun = (r) => r.names.map((n) => `${n} ${(r.median(n) / RUNS / 1000).toFixed(2)} ms`).join(', ')
console.log(`per run in a batch (median batch / ${RUNS}): ${perRun(res)}`)
if (srtRes) {
  console.log(`\nsandbox-runtime, apart: ${ROUNDS} rounds × ${SRT_ITERS} batch(es) per peer, interleaved`)
  printRounds(srtRes, 'sandbox-runtime.ww')
  console.log(`per run in a batch: ${perRun(srtRes)}`)
}
console.log()
const line = (name, a, b, why, from = res) => (why ? skipLine(name, why) : ratioLine(name, from.ratio(a, b)))
line(`concurrent${RUNS}_ro_landlock_vs_node`, 'executor.ro.landlock', 'node.bash')
line(`concurrent${RUNS}_ww_bwrap_vs_node`, 'executor.ww.bwrap', 'node.bash')
line(`concurrent${RUNS}_ro_landlock_vs_bare_bwrap`, 'executor.ro.landlock', 'bwrap.bare', bareWhy)
line(`concurrent${RUNS}_ww_bwrap_vs_bare_bwrap`, 'executor.ww.bwrap', 'bwrap.bare', bareWhy)
line(
  `concurrent${RUNS}_ww_bwrap_vs_sandbox_runtime`,
  'executor.ww.bwrap',
  'sandbox-runtime.ww',
  typeof srt === 'string' ? `sandbox-runtime ${SRT_VERSION}: ${srt}` : undefined,
  srtRes,
)
