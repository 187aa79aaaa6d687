/**
 * OpenAI Codex's Linux sandbox per command (issue 28): `codex sandbox -- true` (read-only: its own
 * bubblewrap and a seccomp filter) against cordon's read-only run of the same command. Codex is
 * installed from the npm registry into ~/.cache/cordon-bench/codex-<version> (bench/npm-cache.mjs);
 * where it cannot be installed or run, its rows say why. Peers, interleaved in one process with
 * the order rotated each iteration, 3 rounds (2 warm-up + 10 measured per peer per round):
 *
 *   codex.sandbox         `codex sandbox -c sandbox_mode="read-only" -- true` through the package's
 *                         bin (node bin/codex.js, which starts the native binary), spawn → 'close'
 *   codex.native          the same through the package's native binary directly
 *   cordon.run            `node bin/cordon.js run -- true` (read-only, the host's first usable
 *                         backend, the probe verdict cached): a process per command, as codex's
 *   executor.ro.landlock  executor.run(executor.resolve({ command: 'true' })) in this process,
 *                         read-only on Landlock: what a harness using the library pays per command
 *   node -e 0             Node's own start-up: the floor of cordon.run and of codex.sandbox
 *
 * Codex gets a CODEX_HOME and a TMPDIR of its own in the cache (it refuses a home under /tmp), so
 * neither the user's ~/.codex nor /tmp is written; the empty /tmp/codex-daemon-<uid> it makes
 * regardless is removed again when this run made it. No goal: ratios only.
 *
 *   node --expose-gc bench/codex.mjs   (CODEX_WARMUP, CODEX_ITERS, CODEX_ROUNDS override)
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  dist,
  gc,
  measureRounds,
  noiseNote,
  printRounds,
  ratioLine,
  requireBuilt,
  requireUsable,
  root,
  skipLine,
  timeExecutorRun,
  timeNodeSpawn,
} from './lib.mjs'
import { CACHE, cachedInstall } from './npm-cache.mjs'

requireBuilt()
const { LocalSandbox, LocalShellExecutor, LocalSubprocessRuntime } = await dist('index.js')

const WARMUP = Number(process.env.CODEX_WARMUP ?? 2)
const ITERS = Number(process.env.CODEX_ITERS ?? 10)
const ROUNDS = Number(process.env.CODEX_ROUNDS ?? 3)
/** The codex release measured (the registry's latest when this was written). */
const CODEX_VERSION = '0.171.0'
const CODEX_DIR = `codex-${CODEX_VERSION}`
const READ_ONLY = ['sandbox', '-c', 'sandbox_mode="read-only"', '--']

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-codex-')))
const daemonDir = join(tmpdir(), `codex-daemon-${process.getuid?.() ?? 0}`)
const daemonDirBefore = existsSync(daemonDir)
const codexEnv = {
  ...process.env,
  CODEX_HOME: join(CACHE, CODEX_DIR, 'home'),
  TMPDIR: join(CACHE, CODEX_DIR, 'tmp'),
}

/** The native binary of the platform package npm chose, or undefined. */
function nativeBinary() {
  const vendor = join(
    CACHE,
    CODEX_DIR,
    'node_modules',
    '@openai',
    `codex-${process.platform}-${process.arch}`,
    'vendor',
  )
  if (!existsSync(vendor)) return undefined
  const triple = readdirSync(vendor).find((t) => existsSync(join(vendor, t, 'bin', 'codex')))
  return triple && join(vendor, triple, 'bin', 'codex')
}

/** Both entries of codex, checked to run `true` and to refuse a write; a string says why not. */
function findCodex() {
  if (process.platform !== 'linux') return `codex's Linux sandbox only (this is ${process.platform})`
  const bin = cachedInstall(CODEX_DIR, `@openai/codex@${CODEX_VERSION}`, 'node_modules/@openai/codex/bin/codex.js')
  if (!bin.startsWith('/')) return bin
  const native = nativeBinary()
  if (!native) return `the package has no native binary for ${process.platform}-${process.arch}`
  for (const dir of [codexEnv.CODEX_HOME, codexEnv.TMPDIR]) mkdirSync(dir, { recursive: true })
  const run = (argv) =>
    spawnSync(native, [...READ_ONLY, ...argv], { cwd: workspace, env: codexEnv, encoding: 'utf8', timeout: 60_000 })
  const ok = run(['true'])
  if (ok.status !== 0)
    return `\`codex sandbox -- true\` fails here (exit ${ok.status ?? ok.signal}): ${`${ok.stderr}`.trim().split('\n').pop()}`
  const write = run(['sh', '-c', `echo x > ${join(workspace, 'codex-wrote')}`])
  if (write.status === 0 || existsSync(join(workspace, 'codex-wrote')))
    return 'codex sandbox let a read-only run write its workspace: not a confined run here'
  return { bin, native }
}

const codex = findCodex()
const why = typeof codex === 'string' ? `codex ${CODEX_VERSION}: ${codex}` : undefined
if (why) console.log(`bench/codex: its rows are skipped: ${why}`)

const cli = join(root, 'bin', 'cordon.js')
const first = spawnSync(process.execPath, [cli, 'run', '--', 'true'], { cwd: workspace, encoding: 'utf8' })
if (first.status !== 0) {
  console.error(`bench/codex: \`cordon run -- true\` fails here (exit ${first.status}): ${first.stderr}`)
  process.exit(2)
}
const rt = new LocalSubprocessRuntime()
const landlock = await LocalSandbox.create({ backends: ['landlock'] })
requireUsable(landlock, 'landlock', 'codex')
const executor = new LocalShellExecutor({
  cwd: workspace,
  workspaceRoot: workspace,
  sandbox: landlock,
  subprocess: rt,
  defaultMode: 'read-only',
})

const peers = {
  'node -e 0': () => timeNodeSpawn(process.execPath, ['-e', '0'], { cwd: workspace }),
  'cordon.run': () => timeNodeSpawn(process.execPath, [cli, 'run', '--', 'true'], { cwd: workspace }),
  'executor.ro.landlock': () => timeExecutorRun(executor, 'executor.ro.landlock'),
  ...(why
    ? {}
    : {
        'codex.sandbox': () =>
          timeNodeSpawn(process.execPath, [codex.bin, ...READ_ONLY, 'true'], { cwd: workspace, env: codexEnv }),
        'codex.native': () => timeNodeSpawn(codex.native, [...READ_ONLY, 'true'], { cwd: workspace, env: codexEnv }),
      }),
}

gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
const seconds = (Date.now() - started) / 1000
await executor.dispose()
await rt.dispose()
await landlock.dispose()
rmSync(workspace, { recursive: true, force: true })
if (!daemonDirBefore && existsSync(daemonDir) && readdirSync(daemonDir).length === 0) rmdirSync(daemonDir)

console.log(
  `codex: \`true\` per command, read-only; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, why ? 'cordon.run' : 'codex.native')
console.log()
const line = (name, a, b) => (why ? skipLine(name, why) : ratioLine(name, res.ratio(a, b)))
line('codex_cordon_run_ro_vs_codex_sandbox', 'cordon.run', 'codex.sandbox')
line('codex_cordon_run_ro_vs_codex_native', 'cordon.run', 'codex.native')
line('codex_executor_ro_vs_codex_native', 'executor.ro.landlock', 'codex.native')
line('codex_native_vs_node_start', 'codex.native', 'node -e 0')
