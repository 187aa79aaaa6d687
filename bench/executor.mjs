/**
 * The executor's own cost: `run()` of `true` through LocalShellExecutor vs the subprocess
 * floor's spawn of `bash -c true` under the same mode (same confinement, same collection),
 * interleaved in one process. Goal: executor ≤ 1.15× the floor, per mode.
 *
 *   node --expose-gc bench/executor.mjs          (EXEC_WARMUP, EXEC_ITERS override)
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dist, fmt, gc, interleave, median, now, p90, printTable, ratioLine, requireBuilt, usSince } from './lib.mjs'

requireBuilt()
const { LocalSandbox, LocalShellExecutor, LocalSubprocessRuntime, resolvePolicy } = await dist('index.js')

const WARMUP = Number(process.env.EXEC_WARMUP ?? 30)
const ITERS = Number(process.env.EXEC_ITERS ?? 200)
const root = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-exec-')))

const sandbox = await LocalSandbox.create()
const rt = new LocalSubprocessRuntime()
const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, subprocess: rt })
const collect = { maxBytes: 64000, spill: { maxBytes: 64 * 1024 * 1024 } }
const env = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }

const modes = ['read-only', 'workspace-write', 'danger-full-access']
const peers = {}
for (const mode of modes) {
  const policy = resolvePolicy({ cwd: root, workspaceRoot: root, defaultMode: mode })
  const spec = executor.resolve({ command: 'true', sandboxPolicy: policy })
  const floorSpec = {
    argv: ['bash', '-c', 'true'],
    cwd: root,
    stdio: { stdin: 'ignore', stdout: collect, stderr: collect },
    graceMs: 3000,
    env,
  }
  peers[`executor ${mode}`] = async () => {
    const t0 = now()
    const r = await executor.run(spec)
    const us = usSince(t0)
    if (r.exitCode !== 0) throw new Error(`executor ${mode}: ${JSON.stringify(r)}`)
    return us
  }
  peers[`floor ${mode}`] = async () => {
    const t0 = now()
    // The floor pays for confinement too (except danger-full-access), as the executor does.
    const confined = mode === 'danger-full-access' ? floorSpec : sandbox.confine(floorSpec, policy).spec
    const h = rt.spawn(confined)
    const out = await h.done
    const us = usSince(t0)
    if (out.exitCode !== 0) throw new Error(`floor ${mode}: ${JSON.stringify(out)}`)
    return us
  }
}

gc()
const started = Date.now()
const samples = await interleave(peers, { warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
await executor.dispose()
await rt.dispose()
await sandbox.dispose()
rmSync(root, { recursive: true, force: true })

console.log(
  `run() of \`true\` vs the floor's spawn of \`bash -c true\`, ${WARMUP} warm-up + ${ITERS} measured per peer, interleaved (${seconds.toFixed(1)} s)`,
)
printTable(
  ['peer', 'median µs', 'p90 µs', 'min µs'],
  Object.entries(samples).map(([name, xs]) => [name, fmt(median(xs)), fmt(p90(xs)), fmt(Math.min(...xs))]),
)
console.log()
console.log('goal: executor ≤ 1.15× the floor under the same mode')
for (const mode of modes) {
  ratioLine(
    `executor_vs_floor_${mode.replace(/-/g, '_')}`,
    median(samples[`executor ${mode}`]) / median(samples[`floor ${mode}`]),
  )
}
