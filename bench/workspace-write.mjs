/**
 * Workspace-write at the speed of a read-only run (issue 22): the executor's public path,
 * `executor.run(executor.resolve({ command: 'true' }))` (bash -c true), interleaved in one
 * process, the order rotated each iteration, 3 rounds:
 *
 *   executor.ro.landlock     read-only on Landlock: the peer every goal ratio is taken against
 *   executor.ww.resident     workspace-write on bubblewrap, runs in the plan's resident instance
 *   executor.ro.resident     read-only on bubblewrap, resident instance
 *   executor.ww.per-run      workspace-write on bubblewrap with `residentInstances: false` (a
 *                            bwrap per run: the path before the instances)
 *   sandbox-runtime.ww       Anthropic's sandbox-runtime through its library: initialize once,
 *                            then wrapWithSandbox('bash -c true') and a shell spawn of the result,
 *                            until 'close' (pinned below; installed from the npm registry into
 *                            ~/.cache/cordon-bench; needs socat and bwrap; skipped, saying why,
 *                            where it cannot run)
 *
 * Then, apart (each is a whole sandbox's life): the first run of a fresh instance (cold: a new
 * LocalSandbox with the probe's verdicts, one run, dispose) against the same with a bwrap per run.
 *
 * Then the confined read-only public path, rt.spawn(sb.confine(spec, policy).spec) until done,
 * against Node's spawn of bash -c true, quiet and with one other process keeping a core busy.
 *
 * Goals (issue 22): executor.ww.resident ≤ 1.5× executor.ro.landlock, executor.ro.resident the
 * same; the confined public path ≤ 0.75× node quiet and ≤ 0.9× with a busy core.
 *
 *   node --expose-gc bench/workspace-write.mjs      (WW_WARMUP, WW_ITERS, WW_ROUNDS override;
 *                                                   WW_SKIP_SRT=1 skips sandbox-runtime)
 */
import { spawn } from 'node:child_process'
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
  requireUsable,
  skipLine,
  timeExecutorRun,
  timeNodeSpawn,
  usSince,
} from './lib.mjs'
import { SRT_VERSION, sandboxRuntime, timeSandboxRuntime } from './npm-cache.mjs'

requireBuilt()
const { LocalSandbox, LocalShellExecutor, LocalSubprocessRuntime } = await dist('index.js')

const WARMUP = Number(process.env.WW_WARMUP ?? 20)
const ITERS = Number(process.env.WW_ITERS ?? 100)
const ROUNDS = Number(process.env.WW_ROUNDS ?? 3)

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-ww-')))
const rt = new LocalSubprocessRuntime()
const landlock = await LocalSandbox.create({ backends: ['landlock'] })
const bwrap = await LocalSandbox.create({ backends: ['bubblewrap'] })
requireUsable(landlock, 'landlock', 'workspace-write')
requireUsable(bwrap, 'bubblewrap', 'workspace-write')
const perRun = await LocalSandbox.create({
  backends: ['bubblewrap'],
  capabilities: bwrap.capabilities,
  residentInstances: false,
})

const executorOn = (sandbox, defaultMode) =>
  new LocalShellExecutor({ cwd: workspace, workspaceRoot: workspace, sandbox, subprocess: rt, defaultMode })
const executors = {
  'executor.ro.landlock': executorOn(landlock, 'read-only'),
  'executor.ww.resident': executorOn(bwrap, 'workspace-write'),
  'executor.ro.resident': executorOn(bwrap, 'read-only'),
  'executor.ww.per-run': executorOn(perRun, 'workspace-write'),
}

const run = (name) => timeExecutorRun(executors[name], name)

const srt = process.env.WW_SKIP_SRT ? 'skipped (WW_SKIP_SRT)' : await sandboxRuntime(workspace)
if (typeof srt === 'string') console.log(`bench/workspace-write: sandbox-runtime ${SRT_VERSION} row skipped: ${srt}`)

const peers = Object.fromEntries(Object.keys(executors).map((name) => [name, () => run(name)]))
if (typeof srt !== 'string') peers['sandbox-runtime.ww'] = () => timeSandboxRuntime(srt, 'bash -c true', workspace)

gc()
let started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
console.log(
  `workspace-write: run() of \`true\` per command; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${((Date.now() - started) / 1000).toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'executor.ro.landlock')

// Cold: a sandbox's first run, in a fresh instance or under a bwrap of its own.
async function coldRun(resident) {
  const sandbox = await LocalSandbox.create({
    backends: ['bubblewrap'],
    capabilities: bwrap.capabilities,
    residentInstances: resident,
  })
  const executor = executorOn(sandbox, 'workspace-write')
  const t0 = now()
  const r = await executor.run(executor.resolve({ command: 'true' }))
  const us = usSince(t0)
  await executor.dispose()
  await sandbox.dispose()
  if (r.exitCode !== 0) throw new Error(`cold run: ${JSON.stringify(r)}`)
  return us
}
started = Date.now()
const cold = await measureRounds(
  { 'cold.ww.resident': () => coldRun(true), 'cold.ww.per-run': () => coldRun(false) },
  { rounds: ROUNDS, warmup: 3, iterations: Math.max(5, Math.round(ITERS / 5)), between: gc },
)
console.log()
console.log(`cold: a fresh sandbox's first workspace-write run (${((Date.now() - started) / 1000).toFixed(1)} s)`)
printRounds(cold, 'cold.ww.per-run')

// The confined read-only public path against Node's spawn, quiet and with one busy core.
const collect = { maxBytes: 64000, spill: { maxBytes: 64 * 1024 * 1024 } }
const spec = {
  argv: ['bash', '-c', 'true'],
  cwd: workspace,
  stdio: { stdin: 'ignore', stdout: collect, stderr: collect },
  graceMs: 3000,
}
const roPolicy = { mode: 'read-only', workspaceRoot: workspace }
const publicPeers = {
  'node.bash': () => timeNodeSpawn('bash', ['-c', 'true'], { cwd: workspace }),
  'public.ro.landlock': async () => {
    const t0 = now()
    const out = await rt.spawn(landlock.confine(spec, roPolicy).spec).done
    const us = usSince(t0)
    if (out.exitCode !== 0) throw new Error(`public.ro.landlock: ${JSON.stringify(out)}`)
    return us
  },
}
const quiet = await measureRounds(publicPeers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
const spinner = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' })
const busy = await measureRounds(publicPeers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
spinner.kill('SIGKILL')
console.log()
console.log('public path, quiet:')
printRounds(quiet, 'node.bash')
console.log('public path, one core kept busy:')
printRounds(busy, 'node.bash')

for (const e of Object.values(executors)) await e.dispose()
await srt?.reset?.()
await rt.dispose()
for (const sb of [landlock, bwrap, perRun]) await sb.dispose()
rmSync(workspace, { recursive: true, force: true })

console.log()
console.log(
  'goals (issue 22): resident workspace-write and read-only ≤ 1.5× Landlock read-only; public path ≤ 0.75× node quiet, ≤ 0.9× busy',
)
goalLine('ww_resident_vs_ro_landlock', res.ratio('executor.ww.resident', 'executor.ro.landlock'), '<=', 1.5)
goalLine('ro_resident_vs_ro_landlock', res.ratio('executor.ro.resident', 'executor.ro.landlock'), '<=', 1.5)
ratioLine('ww_per_run_vs_ro_landlock', res.ratio('executor.ww.per-run', 'executor.ro.landlock'))
ratioLine('ww_resident_vs_per_run', res.ratio('executor.ww.resident', 'executor.ww.per-run'))
if (typeof srt !== 'string')
  ratioLine('ww_resident_vs_sandbox_runtime', res.ratio('executor.ww.resident', 'sandbox-runtime.ww'))
else skipLine('ww_resident_vs_sandbox_runtime', `sandbox-runtime ${SRT_VERSION}: ${srt}`)
ratioLine('cold_resident_vs_per_run', cold.ratio('cold.ww.resident', 'cold.ww.per-run'))
goalLine('public_ro_vs_node_quiet', quiet.ratio('public.ro.landlock', 'node.bash'), '<=', 0.75)
goalLine('public_ro_vs_node_busy_core', busy.ratio('public.ro.landlock', 'node.bash'), '<=', 0.9)
