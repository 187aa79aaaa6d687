// The workload corpus (corpus.ts) against the real CLI: every case runs unconfined (the control)
// and through `cordon run --json` on the default chain and pinned to each backend, as root (and
// a subset as uid 65534), in fresh project dirs per run, and must give its checked-in verdict:
// the same as unconfined, a denial with its path and a remedy that works when rerun, or a failure
// by design that claims no write denial. No run may leave anything behind (processes, host temp
// files, its session dir, /dev/shm entries); what the corpus keeps by design (the confined cache
// in its private dirs) lives as long as the corpus and is removed with its base dir.
// Runs through dist/: `npx tsc -p tsconfig.build.json` must have run.
// The base dir is in /var/tmp, not /tmp: the Landlock read view lists the siblings of every
// hidden place (the private dir and ~ are in the base), and /tmp churns with other suites.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { backendStatus, gateFor } from '../support/sandbox/backends.js'
import { runThroughExecutor } from '../support/workload/executor.js'
import { buildFixtures } from '../support/workload/fixtures.js'
import {
  cordonArgv,
  denialLineOf,
  type Exited,
  fill,
  fingerprint,
  freePort,
  leftovers,
  makeRunDirs,
  markedProcesses,
  NOBODY,
  normalize,
  type Places,
  pathMatches,
  pathsMatching,
  type RunDirs,
  runEnv,
  shellWords,
  shmEntries,
  spawnAs,
} from '../support/workload/run.js'
import { type Expected, type Tool, WORKLOADS, type WorkloadCase } from './corpus.js'

type Chain = 'default' | 'landlock' | 'bubblewrap'
type Via = 'cli' | 'executor'
const CHAINS: readonly Chain[] = ['default', 'landlock', 'bubblewrap']

const BASE_PARENT = '/var/tmp'
// A corpus killed before its afterAll leaves its base behind: the next one removes it.
for (const name of fs.readdirSync(BASE_PARENT)) {
  const pid = /^cordon-workloads-(\d+)-/.exec(name)?.[1]
  if (pid !== undefined && !fs.existsSync(`/proc/${pid}`))
    fs.rmSync(path.join(BASE_PARENT, name), { recursive: true, force: true })
}
const base = fs.realpathSync(fs.mkdtempSync(path.join(BASE_PARENT, `cordon-workloads-${process.pid}-`)))
fs.chmodSync(base, 0o755)
const runs = path.join(base, 'runs')
fs.mkdirSync(runs, { mode: 0o755 })
/** cordon's private dir of each uid, shared by the corpus's CLI runs (the confined cache stays warm). */
const privateDirs = new Map<number, string>()
for (const uid of [0, NOBODY]) {
  const dir = path.join(base, `private-${uid}`)
  fs.mkdirSync(dir, { mode: 0o700 })
  fs.chownSync(dir, uid, uid)
  privateDirs.set(uid, dir)
}
let fix = ''
const matrix: Array<{ name: string; variant: string; ran: string; expected: string; verdict: string }> = []
const started = Date.now()

// --- host tools (checked once, before any case runs: the checks block) -----------------------
const toolsRequired = Boolean(process.env.CI || process.env.CORDON_REQUIRE_TOOLS)
const succeeds = (argv: string[], timeout = 15_000) => {
  try {
    execFileSync(argv[0]!, argv.slice(1), { stdio: 'ignore', timeout })
    return true
  } catch {
    return false
  }
}
const toolChecks: Record<Tool, () => boolean> = {
  git: () => succeeds(['git', '--version']),
  npm: () => succeeds(['npm', '--version']),
  gcc: () => succeeds(['gcc', '--version']),
  make: () => succeeds(['make', '--version']),
  curl: () => succeeds(['curl', '--version']),
  rg: () => succeeds(['rg', '--version']),
  'python3-venv': () => succeeds(['/usr/bin/python3', '-m', 'ensurepip', '--version']),
  registry: () => succeeds(['npm', 'ping', '--fetch-timeout=8000', '--fetch-retries=0']),
  sqlite3: () => succeeds(['sqlite3', '-version']),
  tmux: () => succeeds(['tmux', '-V']),
  screen: () => succeeds(['sh', '-c', 'command -v screen']),
  cmake: () => succeeds(['cmake', '--version']),
  perl: () => succeeds(['perl', '-v']),
  'ssh-keygen': () => succeeds(['sh', '-c', 'command -v ssh-keygen']),
}
const tools = new Map<Tool, boolean>()

beforeAll(() => {
  for (const tool of Object.keys(toolChecks) as Tool[]) tools.set(tool, toolChecks[tool]())
  fix = buildFixtures(base)
}, 120_000)

afterAll(() => {
  const width = Math.max(...WORKLOADS.map((c) => c.name.length))
  const lines = matrix
    .sort((a, b) => a.name.localeCompare(b.name) || a.variant.localeCompare(b.variant))
    .map(
      (r) =>
        `${r.name.padEnd(width)}  ${r.variant.padEnd(27)} ${r.ran.padEnd(10)} ${r.expected.padEnd(6)} ${r.verdict}`,
    )
  const failed = matrix.filter((r) => r.verdict !== 'ok').length
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const report = `workload corpus: ${matrix.length} variants, ${failed} failing, ${seconds} s\n${lines.join('\n')}\n`
  console.log(report)
  if (process.env.CORDON_WORKLOADS_MATRIX) fs.writeFileSync(process.env.CORDON_WORKLOADS_MATRIX, report)
  fs.rmSync(base, { recursive: true, force: true })
})

/** Skips (with the reason) or, for a tool CI must have, fails when a case's tool is missing. */
function needTools(ctx: TestContext, c: WorkloadCase): void {
  for (const tool of c.needs ?? []) {
    if (tools.get(tool)) continue
    if (tool === 'registry') ctx.skip('the npm registry is unreachable from this host (npm ping failed)')
    if (toolsRequired) throw new Error(`${tool} is required (CI / CORDON_REQUIRE_TOOLS) but missing on this host`)
    ctx.skip(`${tool} is not installed on this host`)
  }
}

// --- one run ----------------------------------------------------------------------------------
/** The facts a confined run reports (`cordon run --json`'s line, or the executor's result). */
interface RunJson {
  exitCode: number | null
  signal: string | null
  stdout: { text: string; truncated: boolean; spillPath?: string }
  stderr: { text: string; truncated: boolean; spillPath?: string }
  sandbox?: {
    backend?: string
    denied: boolean
    deniedPaths?: readonly string[]
    refusedPaths?: readonly string[]
    mode: string
    removedEnv?: readonly string[]
    closedClasses?: ReadonlyArray<{ class: string; remedy: string }>
  }
}

/** How one run goes: unconfined, `cordon run` (with --json or as a person reads it), or the executor. */
type How = { kind: 'unconfined' } | { kind: 'cli'; json: boolean; flags: Flags } | { kind: 'executor'; flags: Flags }
type Flags = (dirs: RunDirs) => string[]

/** One finished run. */
interface Outcome {
  dirs: RunDirs
  places: Places
  /** The unconfined run's exit and output. */
  exited?: Exited
  /** A confined run's facts, or why there are none. */
  result?: RunJson
  problem?: string
  /** The denial line a person reads (CLI text run, or what the CLI prints for an executor result). */
  denial?: string | undefined
  /** A denial target's fingerprint before the run (undefined: absent). */
  before: string | undefined
  effects: string
  left: string[]
}

let serial = 0
/** A 6-char run label: the case's index, what the run is, its chain and uid. */
function label(c: WorkloadCase, what: string, chain: Chain | 'unconfined', uid: number): string {
  return `${String(WORKLOADS.indexOf(c)).padStart(2, '0')}-${what}${chain[0]}${uid === 0 ? 'r' : 'n'}`
}

/** Fresh dirs, the setup, the run, what it left, and its effects. */
async function runOnce(c: WorkloadCase, uid: number, name: string, how: How): Promise<Outcome> {
  const dirs = makeRunDirs(runs, name, uid)
  const places: Places = { fix, port: await freePort() }
  let hostServer: http.Server | undefined
  if (c.hostServer) {
    const server = http.createServer((_req, res) => res.end('host service\n'))
    hostServer = server
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    places.hostport = (server.address() as { port: number }).port
  }
  const mark = `wl-${process.pid}-${++serial}`
  // An executor run's sandbox lives in this process: a private dir of its own shows its session is gone.
  const privateDir = how.kind === 'executor' ? path.join(dirs.dir, 'private') : privateDirs.get(uid)!
  if (how.kind === 'executor') fs.mkdirSync(privateDir, { mode: 0o700 })
  const env = { ...runEnv(dirs, privateDir, mark), ...c.env }
  const cwd = c.cwd ? path.join(dirs.root, c.cwd) : dirs.root
  try {
    if (c.setup) {
      const s = await spawnAs(uid, ['bash', '-ec', fill(c.setup, dirs, places)], { cwd: dirs.root, env })
      if (s.code !== 0) throw new Error(`setup of ${c.name} failed (${s.code}): ${s.stderr}`)
    }
    const before = targetFingerprint(c, dirs, places)
    const shmBefore = shmEntries()
    const command = fill(c.command, dirs, places)
    const out: Partial<Outcome> = {}
    if (how.kind === 'executor') {
      const r = await runThroughExecutor(how.flags(dirs), command, cwd, env, c.stdin)
      out.result = r.result
      out.denial = r.denial
    } else {
      const argv =
        how.kind === 'unconfined'
          ? ['bash', '-c', command]
          : cordonArgv([...(how.json ? ['--json'] : []), ...how.flags(dirs), '--', 'bash', '-c', command])
      out.exited = await spawnAs(uid, argv, { cwd, env, stdin: c.stdin })
      if (how.kind === 'cli' && how.json) Object.assign(out, parseResult(out.exited))
      if (how.kind === 'cli' && !how.json) out.denial = /^cordon: sandbox denied.*$/m.exec(out.exited.stderr)?.[0]
    }
    const left = await leftovers({
      dirs,
      mark,
      privateDir,
      shmBefore,
      ...(how.kind === 'executor'
        ? { sessions: 'all' as const }
        : how.kind === 'cli'
          ? { sessions: { pid: out.exited!.pid } }
          : {}),
    })
    const effects = c.effects
      ? await spawnAs(0, ['bash', '-c', fill(c.effects, dirs, places)], {
          cwd: dirs.root,
          env: { ...env, TMPDIR: '/tmp' },
        })
      : undefined
    return {
      ...out,
      dirs,
      places,
      before,
      left,
      effects: effects ? normalize(effects.stdout + effects.stderr, dirs, fix) : '',
    }
  } finally {
    hostServer?.close()
  }
}

/** A denial target's fingerprint (undefined: absent); a pattern's is every match's, by name. */
function targetFingerprint(c: WorkloadCase, dirs: RunDirs, places: Places): string | undefined {
  const e = c.expected
  if (e === undefined || e === 'same' || !('path' in e)) return undefined
  return patternFingerprint(fill(e.path, dirs, places))
}

/** `target`'s fingerprint, or for a pattern each match's with its name (undefined: nothing there). */
function patternFingerprint(target: string): string | undefined {
  if (!target.includes('*')) return fingerprint(target)
  const matches = pathsMatching(target).sort()
  return matches.length === 0 ? undefined : matches.map((p) => `${p} ${fingerprint(p)}`).join('\n')
}

/** The JSON line `cordon run --json` printed, or why there is none. */
function parseResult(exited: Exited): { result?: RunJson; problem?: string } {
  try {
    const json = JSON.parse(exited.stdout.trim().split('\n').pop() ?? '') as RunJson & { error?: unknown }
    // An error report is JSON too; say which error instead of comparing fields it lacks.
    if (json.error !== undefined || json.stdout === undefined)
      return { problem: `cordon reported (exit ${exited.code}): ${JSON.stringify(json.error ?? json).slice(0, 600)}` }
    return { result: json }
  } catch {
    return { problem: `no JSON result (exit ${exited.code}): ${exited.stderr.trim().slice(-600)}` }
  }
}

/** The `cordon run` flags of a case under a chain (without --json); `remedy`: flags a person adds last (the last of a flag wins). */
function flagsOf(c: WorkloadCase, chain: Chain, dirs: RunDirs, remedy: string[] = []): string[] {
  return [
    '--mode',
    c.mode,
    ...(c.network ? ['--network', c.network] : []),
    ...(chain === 'default' ? [] : ['--backend', chain]),
    ...(c.flags ?? []),
    '--timeout',
    '90000',
    // The root is the cwd unless the case runs in a subdir.
    ...(c.cwd ? ['--root', dirs.root] : []),
    ...remedy,
  ]
}

/** The unconfined control of a case for one uid, run once and shared by its variants. */
const controls = new Map<string, Promise<Outcome>>()
function control(c: WorkloadCase, uid: number): Promise<Outcome> {
  const key = `${c.name}:${uid}`
  if (!controls.has(key)) controls.set(key, runOnce(c, uid, label(c, 'u', 'unconfined', uid), { kind: 'unconfined' }))
  return controls.get(key)!
}

const kindOf = (e: Expected) =>
  e === 'same' ? 'same' : 'denied' in e ? 'denied' : 'refused' in e ? 'refused' : 'fails'

/** The variants of a case: via the CLI on every chain as root (and the default chain as uid 65534), via the executor as root. */
function variantsOf(c: WorkloadCase): Array<{ via: Via; chain: Chain; uid: number }> {
  const out: Array<{ via: Via; chain: Chain; uid: number }> = []
  for (const via of c.via ?? ['cli']) {
    if (via === 'executor') {
      for (const chain of CHAINS) out.push({ via, chain, uid: 0 })
      continue
    }
    if (c.nobody !== 'only') for (const chain of CHAINS) out.push({ via, chain, uid: 0 })
    // As uid 65534 the default chain only: the subset shows the unprivileged path end to end.
    if (c.nobody) out.push({ via, chain: 'default', uid: NOBODY })
  }
  return out
}

// Alone, before the corpus: its planted /dev/shm entry would be a concurrent case's leftover.
describe('the leftover check', () => {
  it('sees a leaked process, a host temp file, a session dir and a /dev/shm entry (control)', async () => {
    const dirs = makeRunDirs(runs, '99-lkr', 0)
    const privateDir = path.join(dirs.dir, 'private')
    fs.mkdirSync(path.join(privateDir, 'sessions'), { recursive: true })
    fs.mkdirSync(path.join(privateDir, 'sessions', '4242-anon-AbCdEf'))
    const mark = `wl-${process.pid}-leak`
    const shm = `/dev/shm/cordon-workloads-leak-${process.pid}`
    const shmBefore = shmEntries()
    const leak = `setsid sleep 60 </dev/null >/dev/null 2>&1 & echo x > "$TMPDIR/leak" && echo y > ${shm}`
    await spawnAs(0, ['bash', '-c', leak], { cwd: dirs.root, env: runEnv(dirs, privateDir, mark) })
    try {
      const left = await leftovers({ dirs, mark, privateDir, shmBefore, sessions: { pid: 4242 } })
      expect(left).toHaveLength(4)
      expect(left.join('\n')).toMatch(/process \d+ \(sleep 60\) is still running/)
      expect(left.join('\n')).toContain('the host TMPDIR holds leak')
      expect(left.join('\n')).toContain('4242-anon-AbCdEf')
      expect(left.join('\n')).toContain(path.basename(shm))
    } finally {
      for (const pid of markedProcesses(mark)) process.kill(pid, 'SIGKILL')
      fs.rmSync(shm, { force: true })
    }
  })
})

describe.concurrent('workload corpus', async () => {
  const status = { landlock: await backendStatus('landlock'), bubblewrap: await backendStatus('bubblewrap') }

  /** Skips (with the reason) when the chain has no usable backend; fails when CI requires one that is not. */
  function needChain(ctx: TestContext, chain: Chain): void {
    const names = chain === 'default' ? (['landlock', 'bubblewrap'] as const) : [chain]
    const failing = names.find((n) => gateFor(status[n]) === 'fail')
    if (failing)
      throw new Error(
        `backend ${failing} is required by CORDON_REQUIRE_BACKENDS but unusable: ${status[failing].reason}`,
      )
    if (names.every((n) => gateFor(status[n]) === 'skip'))
      ctx.skip(`no backend of the ${chain} chain is usable here: ${names.map((n) => status[n].reason).join('; ')}`)
  }

  it('holds at least 40 workloads, each name once', () => {
    expect(WORKLOADS.length).toBeGreaterThanOrEqual(40)
    expect(new Set(WORKLOADS.map((c) => c.name)).size).toBe(WORKLOADS.length)
  })

  for (const c of WORKLOADS) {
    for (const { via, chain, uid } of variantsOf(c)) {
      const variant = `${via === 'executor' ? 'executor ' : ''}${chain} as ${uid === 0 ? 'root' : 'nobody'}`
      it(`${c.name} [${variant}]`, { timeout: 240_000 }, async (ctx) => {
        needChain(ctx, chain)
        needTools(ctx, c)
        const row = { name: c.name, variant, ran: '?', expected: '?', verdict: 'running' }
        matrix.push(row)
        const problems = await check(c, via, chain, uid, row)
        row.verdict = problems.length === 0 ? 'ok' : `FAIL: ${problems[0]}`
        expect(problems, c.about).toEqual([])
      })
    }
  }
})

/** A run that failed for want of a scrubbed variable names it, and its remedy gives the unconfined output. */
async function checkRemovedEnv(
  c: WorkloadCase,
  want: NonNullable<WorkloadCase['removedEnv']>,
  result: RunJson,
  base: Outcome,
  uid: number,
  chain: Chain,
  confined: (json: boolean, mode?: (d: RunDirs) => string[]) => How,
): Promise<string[]> {
  const problems: string[] = []
  const named = result.sandbox?.removedEnv ?? []
  if (JSON.stringify(named) !== JSON.stringify(want.names))
    problems.push(`removedEnv ${JSON.stringify(named)}, expected ${JSON.stringify(want.names)}`)
  const again = await runOnce(
    c,
    uid,
    label(c, 'k', chain, uid),
    confined(true, () => shellWords(want.remedy)),
  )
  for (const l of again.left) problems.push(`left behind (remedy run): ${l}`)
  const out = again.result
  if (again.problem || !out) problems.push(`remedy run: ${again.problem}`)
  else if (out.exitCode !== base.exited?.code || out.stdout.text !== base.exited?.stdout)
    problems.push(
      `the remedy "${want.remedy}" does not work: exit ${out.exitCode}, stdout ${JSON.stringify(out.stdout.text)}`,
    )
  return problems
}

/** Runs one variant of a case; returns every way it differs from its expectation. */
async function check(
  c: WorkloadCase,
  via: Via,
  chain: Chain,
  uid: number,
  row: { ran: string; expected: string },
): Promise<string[]> {
  const problems: string[] = []
  const confined = (json: boolean, remedy?: (d: RunDirs) => string[]): How => {
    const flags: Flags = (d) => flagsOf(c, chain, d, remedy?.(d))
    return via === 'executor' ? { kind: 'executor', flags } : { kind: 'cli', json, flags }
  }
  const base = await control(c, uid)
  const baseOut = base.exited!
  if (base.left.length > 0) problems.push(`the unconfined control left: ${base.left.join('; ')}`)
  const run = await runOnce(c, uid, label(c, via === 'executor' ? 'e' : 'j', chain, uid), confined(true))
  if (run.problem) problems.push(run.problem)
  for (const l of run.left) problems.push(`left behind: ${l}`)
  const result = run.result
  row.ran = result?.sandbox?.backend ?? (chain === 'default' ? '?' : chain)
  const expected = (c.on as Record<string, Expected | undefined> | undefined)?.[row.ran] ?? c.expected ?? 'same'
  row.expected = kindOf(expected)
  if (!result) return problems
  const norm = (text: string, d: RunDirs) => normalize(text, d, fix)

  if (c.spill) {
    const spill = result.stdout.spillPath
    if (!result.stdout.truncated) problems.push('stdout was not truncated')
    if (spill === undefined) problems.push('no spillPath in the JSON')
    else if (!fs.existsSync(spill)) problems.push(`the spill file ${spill} is gone when cordon has exited`)
    else {
      if (!spill.startsWith(`${privateDirs.get(uid)}/`))
        problems.push(`the spill file ${spill} is outside the private dir`)
      if (fs.readFileSync(spill, 'utf8') !== baseOut.stdout)
        problems.push('the spill file does not hold the whole stdout')
    }
    if (!baseOut.stdout.endsWith(result.stdout.text)) problems.push('the kept stdout is not the tail of the output')
  }

  if (c.removedEnv) problems.push(...(await checkRemovedEnv(c, c.removedEnv, result, base, uid, chain, confined)))

  if (expected === 'same') {
    if (result.exitCode !== baseOut.code || result.signal !== baseOut.signal)
      problems.push(
        `exit ${result.exitCode ?? result.signal} (unconfined: ${baseOut.code ?? baseOut.signal}); stderr: ${JSON.stringify(result.stderr.text.trim().slice(-400))}`,
      )
    for (const stream of c.compare ?? ['stdout']) {
      if (c.spill && stream === 'stdout') continue
      const got = norm(result[stream].text, run.dirs)
      const want = norm(baseOut[stream], base.dirs)
      if (got !== want)
        problems.push(
          `${stream} differs: got ${JSON.stringify(got.slice(-400))}, unconfined ${JSON.stringify(want.slice(-400))}`,
        )
    }
    if (result.sandbox?.denied) problems.push(`claims a denial of ${result.sandbox.deniedPaths?.join(', ')}`)
    if (result.sandbox?.refusedPaths?.length)
      problems.push(`claims refused writes of ${result.sandbox.refusedPaths.join(', ')} (it ran the same)`)
    if (run.effects !== base.effects)
      problems.push(`effects differ: got ${JSON.stringify(run.effects)}, unconfined ${JSON.stringify(base.effects)}`)
    return problems
  }

  if (baseOut.code !== 0)
    problems.push(`control: the unconfined run failed (${baseOut.code}): ${baseOut.stderr.trim().slice(-400)}`)

  if ('fails' in expected) {
    if (result.exitCode === 0) problems.push(`the confined run succeeded (expected to fail: ${expected.fails})`)
    if (result.sandbox?.denied)
      problems.push(`claims a write denial of ${result.sandbox.deniedPaths?.join(', ')} (it is: ${expected.fails})`)
    const closed = expected.closed
    if (closed) {
      // The text run a person reads ('t'), and the run with the flags followed once ('r').
      const again = (what: 't' | 'r') =>
        runOnce(
          c,
          uid,
          label(c, what, chain, uid),
          confined(what === 'r', what === 'r' ? () => shellWords(closed.remedy) : undefined),
        )
      problems.push(...(await closedProblems(closed, result, base, again)))
    }
    return problems
  }

  // A denial (a refusal, when the command exits 0 all the same): it names exactly the refused path, and did not write it.
  const refusal = 'refused' in expected
  const field = refusal ? 'refusedPaths' : 'deniedPaths'
  const wantPath = fill(expected.path, run.dirs, run.places)
  const denied = refusal
    ? result.sandbox?.denied !== true && (result.sandbox?.refusedPaths?.length ?? 0) > 0
    : result.sandbox?.denied === true
  const paths = result.sandbox?.[field] ?? []
  const noClaimAllowed = 'orNoClaimViaCli' in expected && expected.orNoClaimViaCli === true && via === 'cli'
  if (refusal && (result.exitCode !== 0 || result.sandbox?.denied))
    problems.push(`exit ${result.exitCode}, denied ${result.sandbox?.denied}: expected exit 0 and no denial claimed`)
  if (!refusal && result.exitCode === 0) problems.push('the confined run succeeded: nothing was denied')
  if (!denied && !noClaimAllowed)
    problems.push(
      `not reported as ${refusal ? 'refused' : 'denied'} (stderr: ${JSON.stringify(result.stderr.text.trim().slice(-300))}; stdout: ${JSON.stringify(result.stdout.text.trim().slice(-300))})`,
    )
  const wrong = paths.filter((p) => !pathMatches(wantPath, p))
  if (denied && !paths.some((p) => pathMatches(wantPath, p)))
    problems.push(`${field} ${JSON.stringify(paths)} do not name ${wantPath}`)
  else if (wrong.length > 0) problems.push(`${field} name paths that were not refused: ${JSON.stringify(wrong)}`)
  const after = patternFingerprint(wantPath)
  if (after !== run.before) problems.push(`the refused write happened: ${wantPath} changed`)

  // The line a person reads (the CLI's text run; the executor's result gives it directly).
  let printed: string | undefined
  if (denied) {
    const text = via === 'executor' ? run : await runOnce(c, uid, label(c, 't', chain, uid), confined(false))
    for (const l of via === 'executor' ? [] : text.left) problems.push(`left behind (text run): ${l}`)
    const line = text.denial === undefined ? undefined : denialLineOf(text.denial)
    const wantRemedy = fill(expected.remedy, text.dirs, text.places)
    if (!line) problems.push('no denial line')
    else if (line.remedy !== wantRemedy) problems.push(`remedy "${line.remedy}", expected "${wantRemedy}"`)
    // It names the text run's dirs; a rerun gets fresh dirs of the same shape.
    if (line && line.remedy !== wantRemedy) printed = line.remedy.replaceAll(text.dirs.dir, '{run}')
  }
  // The expected remedy must work (the data's own proof), and a different one cordon printed is tried too.
  const remedies: Array<[string, string]> = [['expected', expected.remedy]]
  if (printed !== undefined) remedies.push(['printed', printed])
  for (const [whose, remedy] of remedies) {
    const again = await runOnce(
      c,
      uid,
      label(c, whose === 'expected' ? 'r' : 'p', chain, uid),
      confined(true, (d) => shellWords(fill(remedy.replaceAll('{run}', d.dir), d, { fix }))),
    )
    for (const l of again.left) problems.push(`left behind (${whose} remedy run): ${l}`)
    if (again.problem) problems.push(`${whose} remedy run: ${again.problem}`)
    else if (
      again.result!.exitCode !== 0 ||
      again.result!.sandbox?.denied ||
      (refusal && (again.result!.sandbox?.refusedPaths?.length ?? 0) > 0)
    )
      problems.push(
        `the ${whose} remedy "${remedy}" does not work: exit ${again.result!.exitCode}, denied ${JSON.stringify(again.result!.sandbox?.deniedPaths ?? [])}; stderr ${JSON.stringify(again.result!.stderr.text.trim().slice(-300))}`,
      )
    else if (again.effects !== base.effects)
      problems.push(
        `effects after the ${whose} remedy differ: got ${JSON.stringify(again.effects)}, unconfined ${JSON.stringify(base.effects)}`,
      )
  }
  return problems
}

/**
 * A closed class the run must report: the fact with its flags, the line a person reads, and the
 * flags followed once: the rerun succeeds with the unconfined run's effects.
 */
async function closedProblems(
  want: { class: string; remedy: string },
  result: RunJson,
  base: Outcome,
  again: (what: 't' | 'r') => Promise<Outcome>,
): Promise<string[]> {
  const problems: string[] = []
  const fact = result.sandbox?.closedClasses?.find((f) => f.class === want.class)
  if (!fact) {
    problems.push(
      `no closed class ${want.class} reported (closedClasses: ${JSON.stringify(result.sandbox?.closedClasses ?? [])}; stderr ${JSON.stringify(result.stderr.text.trim().slice(-300))})`,
    )
    return problems
  }
  if (fact.remedy !== want.remedy)
    problems.push(`closed ${want.class}: remedy "${fact.remedy}", expected "${want.remedy}"`)
  const text = await again('t')
  for (const l of text.left) problems.push(`left behind (text run): ${l}`)
  const line = new RegExp(
    `^cordon: \\S+ closes ${want.class.replaceAll('-', ' ')} whole: .*; to allow it: (.*) \\(or --mode danger-full-access\\)$`,
    'm',
  ).exec(text.exited?.stderr ?? '')
  if (!line)
    problems.push(
      `no closed-class line for ${want.class} (stderr: ${JSON.stringify(text.exited?.stderr.trim().slice(-300))})`,
    )
  else if (line[1] !== want.remedy) problems.push(`closed-class line names "${line[1]}", expected "${want.remedy}"`)
  const rerun = await again('r')
  for (const l of rerun.left) problems.push(`left behind (remedy run): ${l}`)
  if (rerun.problem) problems.push(`remedy run: ${rerun.problem}`)
  else if (rerun.result!.exitCode !== 0 || rerun.result!.sandbox?.denied || rerun.result!.sandbox?.closedClasses)
    problems.push(
      `the remedy "${want.remedy}" does not work: exit ${rerun.result!.exitCode}, closed ${JSON.stringify(rerun.result!.sandbox?.closedClasses ?? [])}; stderr ${JSON.stringify(rerun.result!.stderr.text.trim().slice(-300))}`,
    )
  else if (rerun.effects !== base.effects)
    problems.push(
      `effects after the remedy differ: got ${JSON.stringify(rerun.effects)}, unconfined ${JSON.stringify(base.effects)}`,
    )
  return problems
}
