/**
 * Lifetime (issue 10, class 6), run inside a scenario host as root or nobody: a command leaves
 * writers that quit its process group (setsid, a double fork, nohup … & disown) and keep writing
 * in a writable place (the root in workspace-write, TMPDIR in read-only). Each way a run ends is
 * tried: run() resolving, run() aborted, terminate(), the runtime's dispose(), and a background
 * job that first `kill -KILL $PPID`s its supervisor, then kill() and dispose(). What is alive
 * right after each, and whether any log still grows, is reported. The controls run the same
 * scripts through Node's own spawn, where the writers survive.
 *
 * Processes are found by what their argv names (a writer's log path, a leader's run token), in
 * the host's /proc: a pid a command writes down is its own namespace's under bubblewrap.
 */
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { alive, eventually } from '../../support/subprocess/processes.js'
import type { AttackMode } from '../attacks/attack.js'

// How long writers may take to start: a loaded 2-core CI with every case side by side is slow.
const STARTUP_MS = 30_000

const LOOP = 'echo $$ > "$0.pid"; while :; do echo x >> "$0.log"; sleep 0.05; done'

/** One command of a scenario: its script and how to find each of its processes. */
export interface Leaver {
  script: string
  /** name -> the argv marker that finds it in /proc. */
  markers: Record<string, string>
}

/**
 * bash: leaves three writers in `wdir` (setsid, a double fork, nohup … & disown), waits until
 * each has started, then runs `then`. The leader's argv names its run token.
 */
export function leaveWriters(wdir: string, then = ''): Leaver {
  const token = crypto.randomBytes(6).toString('hex')
  return {
    script: [
      `# cordon-run-${token}-leader`,
      `loop='${LOOP}'`,
      'setsid sh -c "$loop" "$WDIR/setsid" &',
      '( sh -c "$loop" "$WDIR/dfork" & ) &',
      'nohup sh -c "$loop" "$WDIR/nohup" >/dev/null 2>&1 & disown',
      'for n in setsid dfork nohup; do while [ ! -s "$WDIR/$n.pid" ]; do sleep 0.02; done; done',
      'echo started',
      then,
      'exit 0', // not the last command: bash would exec it and lose the leader's argv
    ].join('\n'),
    markers: {
      setsid: `${wdir}/setsid`,
      dfork: `${wdir}/dfork`,
      nohup: `${wdir}/nohup`,
      leader: `cordon-run-${token}-leader`,
    },
  }
}

/**
 * bash: a background job that SIGKILLs its parent (its supervisor), says whether its parent is
 * still the same process, then leaves a setsid writer and lives on.
 */
export function killParentThenWrite(wdir: string): Leaver {
  const token = crypto.randomBytes(6).toString('hex')
  return {
    script: [
      `# cordon-run-${token}-job`,
      'parent=$PPID',
      'kill -KILL "$parent"; echo "kill=$?"',
      'sleep 0.3',
      'now=$(cut -d" " -f4 /proc/$$/stat)',
      '[ "$now" = "$parent" ] && echo parent-kept || echo "parent-lost $parent -> $now"',
      `loop='${LOOP}'`,
      'setsid sh -c "$loop" "$WDIR/bg" &',
      'while [ ! -s "$WDIR/bg.pid" ]; do sleep 0.02; done',
      'echo "supervisor=$parent"',
      'sleep 60',
      'exit 0',
    ].join('\n'),
    markers: { bg: `${wdir}/bg`, job: `cordon-run-${token}-job` },
  }
}

/** What was left of one way of ending a run. */
export interface LifetimeOutcome {
  /** Processes that were seen running before the run was ended (they did start). */
  started: string[]
  /** Those alive right after the run ended, by name. */
  aliveAtEnd: string[]
  /** What was found alive then: pid, state and argv (for a failure's message). */
  aliveDetail?: string[]
  /** Writers whose log still grew 400 ms later. */
  growing: string[]
  /** What the command printed (background jobs: the kill's result, parent-kept/lost). */
  output: string
  /** The supervisor the job named, alive or not from the host (Landlock: a host pid). */
  supervisor?: { pid: number; alive: boolean }
  error?: string
}

/** Host pids of live processes whose argv contains `marker`. */
export function findProcesses(marker: string): number[] {
  const found: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(marker) && alive(pid)) found.push(pid)
    } catch {
      // gone meanwhile
    }
  }
  return found
}

const PF_EXITING = 0x4

/** Whether `pid` has begun its exit (PF_EXITING in /proc/PID/stat's flags, field 9). */
function exiting(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
    const flags = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[9 - 3])
    return (flags & PF_EXITING) !== 0
  } catch {
    return true
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size
  } catch {
    return -1
  }
}

/** Waits until every process of `leaver` runs; returns their names. */
async function waitStarted(leaver: Leaver, timeoutMs = STARTUP_MS): Promise<string[]> {
  const names = Object.keys(leaver.markers)
  await eventually(() => names.every((n) => findProcesses(leaver.markers[n]!).length > 0), timeoutMs)
  return names.filter((n) => findProcesses(leaver.markers[n]!).length > 0)
}

/** What is alive now and what still grows 400 ms later; then every survivor is SIGKILLed. */
async function leftovers(leaver: Leaver, started: string[], output = ''): Promise<LifetimeOutcome> {
  const names = Object.keys(leaver.markers)
  // A member SIGKILLed just before the end may be mid-exit when looked at: its pipes are closed
  // (so the run ended) but /proc says running until it is a zombie. The kernel marks it
  // PF_EXITING from the start of its exit: such a member is dying, not a survivor.
  const found = names.map((n) => findProcesses(leaver.markers[n]!).filter((pid) => !exiting(pid)))
  const aliveAtEnd = names.filter((_, i) => found[i]!.length > 0)
  const aliveDetail = found.flat().map(describe)
  const logs = names.map((n) => `${leaver.markers[n]}.log`)
  const sizes = logs.map(sizeOf)
  await new Promise((r) => setTimeout(r, 400))
  const growing = names.filter((_, i) => sizeOf(logs[i]!) > sizes[i]!)
  for (const n of names) for (const pid of findProcesses(leaver.markers[n]!)) process.kill(pid, 'SIGKILL')
  return { started, aliveAtEnd, ...(aliveDetail.length > 0 ? { aliveDetail } : {}), growing, output }
}

/** `pid state argv…` of a process, for a message. */
function describe(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').slice(0, 160)
    return `${pid} ${stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)} ${argv}`
  } catch {
    return `${pid} gone`
  }
}

function clean(dir: string): void {
  for (const name of fs.readdirSync(dir)) fs.rmSync(path.join(dir, name), { recursive: true, force: true })
}

/** Reads a job's output until it contains `marker` (or STARTUP_MS pass). */
async function outputUntil(job: { readOutput(): { delta: string } }, marker: string): Promise<string> {
  let text = ''
  await eventually(() => {
    text += job.readOutput().delta
    return text.includes(marker)
  }, STARTUP_MS)
  return text
}

/** The supervisor the job named, when it is a host pid (Landlock; under bwrap it is its own pid namespace's init). */
function supervisorOf(printed: string, backend: SandboxBackendName): { pid: number; alive: boolean } | undefined {
  const pid = Number(/supervisor=(\d+)/.exec(printed)?.[1])
  if (backend !== 'landlock' || !Number.isInteger(pid) || pid <= 0) return undefined
  return { pid, alive: alive(pid) }
}

/** Every way of ending a confined run, for one backend and mode. */
export async function confinedLifetime(
  backend: SandboxBackendName,
  mode: AttackMode,
  root: string,
): Promise<Record<string, LifetimeOutcome>> {
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  const policy = { mode, workspaceRoot: root, sessionId: 'lifetime' } as const
  const wdir = mode === 'workspace-write' ? root : sandbox.plan(policy)!.tempDir!
  const rt = new LocalSubprocessRuntime()
  const executor = new LocalShellExecutor({ sandbox, subprocess: rt, cwd: root, workspaceRoot: root, graceMs: 500 })
  const request = (leaver: Leaver, signal?: AbortSignal) =>
    executor.resolve({ command: leaver.script, workdir: root, sandboxPolicy: policy, env: { WDIR: wdir }, signal })
  const spawnConfined = (leaver: Leaver) =>
    rt.spawn(
      sandbox.confine(
        {
          argv: ['bash', '-c', leaver.script],
          cwd: root,
          graceMs: 500,
          env: { WDIR: wdir },
          stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
        },
        policy,
      ).spec,
    )
  const out: Record<string, LifetimeOutcome> = {}
  const attempt = async (name: string, body: () => Promise<LifetimeOutcome>) => {
    clean(wdir)
    try {
      out[name] = await body()
    } catch (e) {
      out[name] = { started: [], aliveAtEnd: [], growing: [], output: '', error: String(e) }
    }
  }

  await attempt('run() resolved', async () => {
    const leaver = leaveWriters(wdir)
    // the leader exits once its writers run: they are seen before it ends (in the output)
    const r = await executor.run(request(leaver))
    const started = r.stdout.text.includes('started') ? Object.keys(leaver.markers) : []
    const how = `exit ${r.exitCode} signal ${r.signal} timedOut ${r.timedOut} sandbox ${JSON.stringify(r.sandbox)}\n`
    return leftovers(leaver, started, how + r.stdout.text + r.stderr.text)
  })
  await attempt('run() aborted', async () => {
    const leaver = leaveWriters(wdir, 'sleep 60')
    const abort = new AbortController()
    const running = executor.run(request(leaver, abort.signal))
    const started = await waitStarted(leaver)
    abort.abort()
    const r = await running
    return leftovers(leaver, started, `aborted=${r.aborted}`)
  })
  await attempt('terminate()', async () => {
    const leaver = leaveWriters(wdir, 'sleep 60')
    const handle = spawnConfined(leaver)
    const started = await waitStarted(leaver)
    handle.terminate()
    await handle.done
    await handle.waitForExit()
    return leftovers(leaver, started)
  })
  await attempt('background kill()', async () => {
    const leaver = killParentThenWrite(wdir)
    const job = executor.start(request(leaver))
    const printed = await outputUntil(job, 'supervisor=')
    const started = await waitStarted(leaver)
    const supervisor = supervisorOf(printed, backend)
    job.kill()
    await job.done
    return { ...(await leftovers(leaver, started, printed)), ...(supervisor ? { supervisor } : {}) }
  })
  // the runtime's dispose() ends both a foreground spawn and a background job
  await attempt('runtime dispose()', async () => {
    const foreground = leaveWriters(wdir, 'sleep 60')
    const background = killParentThenWrite(wdir)
    spawnConfined(foreground)
    const job = executor.start(request(background))
    const printed = await outputUntil(job, 'supervisor=')
    const both: Leaver = { script: '', markers: { ...foreground.markers, ...background.markers } }
    const started = await waitStarted(both)
    await rt.dispose()
    return leftovers(both, started, printed)
  })
  await executor.dispose()
  await rt.dispose()
  await sandbox.dispose()
  return out
}

/** Runs `script` with Node's own spawn. */
function spawnUnconfined(script: string, cwd: string, wdir: string) {
  return spawn('bash', ['-c', script], { cwd, env: { ...process.env, WDIR: wdir }, stdio: ['ignore', 'pipe', 'pipe'] })
}

/** The controls: the same scripts unconfined, where the writers outlive the command. */
export async function unconfinedLifetime(root: string): Promise<Record<string, LifetimeOutcome>> {
  const out: Record<string, LifetimeOutcome> = {}
  clean(root)
  {
    const leaver = leaveWriters(root)
    const child = spawnUnconfined(leaver.script, root, root)
    let printed = ''
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      printed += t
    })
    // 'exit', not 'close': the writers hold the pipes open. The output may arrive after 'exit'.
    await new Promise((r) => child.once('exit', r))
    for (let waited = 0; !printed.includes('started') && waited < 5000; waited += 20)
      await new Promise((r) => setTimeout(r, 20))
    out['run() resolved'] = await leftovers(leaver, printed.includes('started') ? Object.keys(leaver.markers) : [])
  }
  clean(root)
  {
    // a stand-in for the supervisor: a plain parent shell the job can kill
    const leaver = killParentThenWrite(root)
    const child = spawn('sh', ['-c', 'bash -c "$1"; sleep 30', 'sh', leaver.script], {
      cwd: root,
      env: { ...process.env, WDIR: root },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let printed = ''
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      printed += t
    })
    await eventually(() => printed.includes('supervisor='), STARTUP_MS)
    const started = await waitStarted(leaver)
    const stoodIn = { pid: child.pid!, alive: alive(child.pid!) }
    out['background kill()'] = { ...(await leftovers(leaver, started, printed)), supervisor: stoodIn }
  }
  return out
}

/** One backend and mode of a scenario (`control`: unconfined). */
export interface LifetimeCase {
  backend: SandboxBackendName | 'control'
  mode: AttackMode
  root: string
}

/** Every way of ending a run, for each case side by side. */
export async function lifetimeCases(cases: readonly LifetimeCase[]): Promise<Record<string, LifetimeOutcome>[]> {
  return Promise.all(
    cases.map((c) =>
      c.backend === 'control' ? unconfinedLifetime(c.root) : confinedLifetime(c.backend, c.mode, c.root),
    ),
  )
}

/** Starts one case's writers (confined, or unconfined for `control`); the markers that find them, and the session temp dir. */
async function startWriters(c: LifetimeCase): Promise<{ leaver: Leaver; tempDir?: string }> {
  if (c.backend === 'control') {
    const leaver = leaveWriters(c.root, 'sleep 60')
    spawnUnconfined(leaver.script, c.root, c.root)
    return { leaver }
  }
  const sandbox = await LocalSandbox.create({ backends: [c.backend] })
  const policy = { mode: c.mode, workspaceRoot: c.root, sessionId: 'host-killed' } as const
  const tempDir = sandbox.plan(policy)!.tempDir!
  const wdir = c.mode === 'workspace-write' ? c.root : tempDir
  const leaver = leaveWriters(wdir, 'sleep 60')
  new LocalSubprocessRuntime().spawn(
    sandbox.confine(
      {
        argv: ['bash', '-c', leaver.script],
        cwd: c.root,
        graceMs: 500,
        env: { WDIR: wdir },
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
      },
      policy,
    ).spec,
  )
  return { leaver, tempDir }
}

/**
 * The host to be SIGKILLed: starts every case's writers, writes their markers, which started and
 * the session temp dirs (a killed host cannot remove them) into `ready` once they run, and waits
 * to be killed.
 */
export async function hostToKill(cases: readonly LifetimeCase[], ready: string): Promise<void> {
  const writers = await Promise.all(cases.map(startWriters))
  const started = await Promise.all(writers.map((w) => waitStarted(w.leaver)))
  const report = writers.map((w, i) => ({ markers: w.leaver.markers, started: started[i], tempDir: w.tempDir }))
  fs.writeFileSync(ready, JSON.stringify(report))
  await new Promise(() => undefined) // until SIGKILL
}
