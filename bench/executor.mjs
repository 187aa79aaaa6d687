/**
 * The executor's cost through its public path (issue 10, "Budget"): `executor.run(executor.
 * resolve({ command: 'true' }))`, which runs `bash -c true` with the executor's collection,
 * confinement and, for a confined run, lifetime containment (run() resolves only once the tree
 * is gone: the default). Timed from resolve() to run()'s result. Peers, interleaved in one
 * process with the order rotated each iteration, 3 rounds (20 warm-up + 100 measured per peer
 * per round by default):
 *
 *   node.bash            child_process.spawn('bash', ['-c', 'true']), unconfined, pipes resumed,
 *                        until 'close': the peer every ratio is taken against
 *   executor.ro.landlock LocalShellExecutor + LocalSandbox({ backends: ['landlock'] }), read-only
 *   executor.ww.bwrap    LocalShellExecutor + LocalSandbox({ backends: ['bubblewrap'] }),
 *                        workspace-write (its own row, no goal; skipped when bubblewrap is unusable)
 *   floor.ro.landlock    FLOOR, not the executor: rt.spawn(sb.confine(bash -c true, read-only))
 *                        with the executor's stdio shape, until done (no containment wait, no
 *                        facts): what run() adds on top of the subprocess floor (no goal)
 *
 * Goal (issue 10): executor.ro.landlock ≤ 1.2× node.bash. Also kept from ARCHITECTURE.md:
 * executor ≤ 1.15× the floor (executor.ro.landlock against floor.ro.landlock).
 *
 *   node --expose-gc bench/executor.mjs     (EXEC_WARMUP, EXEC_ITERS, EXEC_ROUNDS override)
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
  skipLine,
  requireUsable,
  timeExecutorRun,
  timeNodeSpawn,
  usSince,
} from './lib.mjs'

requireBuilt()
const { LocalSandbox, LocalShellExecutor, LocalSubprocessRuntime } = await dist('index.js')

const WARMUP = Number(process.env.EXEC_WARMUP ?? 20)
const ITERS = Number(process.env.EXEC_ITERS ?? 100)
const ROUNDS = Number(process.env.EXEC_ROUNDS ?? 3)
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-exec-')))

const rt = new LocalSubprocessRuntime()
const landlock = await LocalSandbox.create({ backends: ['landlock'] })
requireUsable(landlock, 'landlock', 'executor')
const bwrap = await LocalSandbox.create({ backends: ['bubblewrap'] })
const bwrapUsable = bwrap.capabilities.backends.bubblewrap?.usable === true
if (!bwrapUsable)
  console.log(
    `bench/executor: bubblewrap unusable (${bwrap.capabilities.backends.bubblewrap?.reason}); its row is skipped`,
  )

const executorOn = (sandbox, defaultMode) =>
  new LocalShellExecutor({ cwd: workspace, workspaceRoot: workspace, sandbox, subprocess: rt, defaultMode })
const roExecutor = executorOn(landlock, 'read-only')
const wwExecutor = executorOn(bwrap, 'workspace-write')

/** The public path: resolve the request (the default policy of the executor's mode), run it. */
const run = timeExecutorRun

// The floor's spec has the executor's shape: bash -c, collected stdout/stderr with spill.
const collect = { maxBytes: 64000, spill: { maxBytes: 64 * 1024 * 1024 } }
const floorSpec = {
  argv: ['bash', '-c', 'true'],
  cwd: workspace,
  stdio: { stdin: 'ignore', stdout: collect, stderr: collect },
  graceMs: 3000,
}
const roPolicy = { mode: 'read-only', workspaceRoot: workspace }

const peers = {
  'node.bash': () => timeNodeSpawn('bash', ['-c', 'true'], { cwd: workspace }),
  'executor.ro.landlock': () => run(roExecutor, 'executor.ro.landlock'),
  ...(bwrapUsable ? { 'executor.ww.bwrap': () => run(wwExecutor, 'executor.ww.bwrap') } : {}),
  'floor.ro.landlock': async () => {
    const t0 = now()
    const out = await rt.spawn(landlock.confine(floorSpec, roPolicy).spec).done
    const us = usSince(t0)
    if (out.exitCode !== 0) throw new Error(`floor.ro.landlock: ${JSON.stringify(out)}`)
    return us
  },
}

gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
const seconds = (Date.now() - started) / 1000
await roExecutor.dispose()
await wwExecutor.dispose()
await rt.dispose()
await landlock.dispose()
await bwrap.dispose()
rmSync(workspace, { recursive: true, force: true })

console.log(
  `executor: run() of \`true\` (bash -c true) vs Node's spawn of bash -c true; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'node.bash')
console.log()
console.log(
  'goals: executor.ro.landlock (lifetime containment included) ≤ 1.2× node.bash (issue 10), ≤ 1.15× floor.ro.landlock (ARCHITECTURE.md)',
)
goalLine('executor_ro_landlock_vs_node_bash', res.ratio('executor.ro.landlock', 'node.bash'), '<=', 1.2)
if (bwrapUsable) ratioLine('executor_ww_bwrap_vs_node_bash', res.ratio('executor.ww.bwrap', 'node.bash'))
else
  skipLine('executor_ww_bwrap_vs_node_bash', `bubblewrap unusable: ${bwrap.capabilities.backends.bubblewrap?.reason}`)
goalLine('executor_ro_landlock_vs_floor', res.ratio('executor.ro.landlock', 'floor.ro.landlock'), '<=', 1.15)
