/**
 * The probe's canary: `cordon-exec canary DIR HOST_PID`, run through the very plan and runtime a
 * real command gets, attempts one operation of every effect class and prints "name errno" lines.
 * Here: running it, and reading its lines against what the plan promises — a backend is usable
 * only when every promised class was really refused (or kept private) on this kernel.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { BackendCapability, SandboxBackendName } from '../../policy/backends.js'
import { errnoName, isSpawnError } from '../../policy/errors.js'
import { LocalSubprocessRuntime } from '../../subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../subprocess/types.js'

/** errno values the canary's verdicts name. */
const E = { PERM: 1, NOENT: 2, SRCH: 3, ACCES: 13, ROFS: 30, NOTTY: 25 } as const

/** One canary run's lines, parsed: check name → errno (0: it succeeded), plus namespace ids and the orphan. */
export interface CanaryReport {
  results: Record<string, number>
  ipcNamespace?: string
  netNamespace?: string
  orphan?: number
}

/** Parses the canary's stdout. */
export function parseCanary(stdout: string): CanaryReport {
  const report: CanaryReport = { results: {} }
  for (const line of stdout.split('\n')) {
    const [name, value] = line.trim().split(' ')
    if (name === undefined || value === undefined) continue
    if (name === 'ipc_ns') report.ipcNamespace = value
    else if (name === 'net_ns') report.netNamespace = value
    else if (name === 'orphan') report.orphan = Number(value)
    else report.results[name] = Number(value)
  }
  return report
}

/** What the plan under test promises, as far as the canary can see. */
export interface CanaryExpectation {
  /** The run has its own IPC namespace (SysV works privately) rather than SysV refused. */
  privateIpc: boolean
  /** The network is denied; with a private namespace, INET sockets open inside it. */
  networkDenied: boolean
  privateNet: boolean
  /** The host is outside the run's pid namespace (ESRCH) rather than refused (EPERM). */
  privatePid: boolean
  /** Writes outside fail with this errno (EACCES under Landlock, EROFS under bwrap's binds). */
  writeRefusal: readonly number[]
  /** inotify watches are refused (Landlock read-only: the hidden places are closed by Landlock alone). */
  watchesRefused?: boolean
}

/** One check that did not hold. */
export interface CanaryFailure {
  check: string
  got: number | string
  wanted: string
}

const refused = (errno: number) => errno === E.PERM || errno === E.ACCES

/** Every check of `report` against `expect`, given the host's own namespace ids. */
export function judgeCanary(
  report: CanaryReport,
  expect: CanaryExpectation,
  host: { ipcNamespace: string; netNamespace: string; orphanGone: boolean },
): CanaryFailure[] {
  const failures: CanaryFailure[] = []
  const r = report.results
  const check = (name: string, ok: (v: number) => boolean, wanted: string) => {
    const v = r[name]
    if (v === undefined) failures.push({ check: name, got: 'missing', wanted })
    else if (!ok(v))
      failures.push({ check: name, got: errnoName(v) === 'EUNKNOWN' ? v : v === 0 ? 'allowed' : errnoName(v), wanted })
  }
  check('write_inside', (v) => v === 0, 'a write into its own temp dir succeeds')
  check('write_outside', (v) => expect.writeRefusal.includes(v), 'a write outside every grant is refused')
  check('chmod', (v) => refused(v) || v === E.ROFS, 'chmod outside the writable set refused (read-only)')
  const hostGone = (v: number) => (expect.privatePid ? v === E.SRCH : refused(v))
  check('signal', hostGone, expect.privatePid ? 'the host is not in its pid namespace' : 'signals to the host refused')
  // seccomp limits prlimit to the caller even in a pid namespace (its pid 1 is a supervisor).
  check('prlimit', (v) => refused(v) || hostGone(v), 'prlimit of the host refused')
  check('prlimit_self', (v) => v === 0, 'prlimit of itself allowed')
  check('keyring', refused, 'keyctl refused')
  if (expect.privateIpc) {
    if (report.ipcNamespace === host.ipcNamespace)
      failures.push({ check: 'ipc_ns', got: 'the host namespace', wanted: 'a private IPC namespace' })
  } else {
    check('sysv', refused, 'SysV IPC refused')
  }
  check('tiocsti', refused, 'TIOCSTI refused')
  check('lease', refused, 'F_SETLEASE refused')
  check('fs_ioctl', refused, 'FS_IOC_SETVERSION on a read-only fd refused')
  if (expect.watchesRefused) check('watch', refused, 'inotify watches refused (read-only)')
  if (expect.networkDenied) {
    check('socket_unix', refused, 'AF_UNIX sockets refused under network deny')
    if (expect.privateNet) {
      if (report.netNamespace === host.netNamespace)
        failures.push({ check: 'net_ns', got: 'the host namespace', wanted: 'a private network namespace' })
    } else {
      check('socket_inet', refused, 'INET sockets refused under network deny')
    }
  }
  if (report.orphan === undefined)
    failures.push({ check: 'orphan', got: 'missing', wanted: 'a setsid grandchild started' })
  else if (!host.orphanGone)
    failures.push({ check: 'orphan', got: 'alive after the run', wanted: 'ended with the run' })
  return failures
}

/** The outcome of one canary spawn. */
export type CanaryRun =
  | { ran: true; report: CanaryReport; exitCode: number | null; stderr: string; orphanGone: boolean }
  | { ran: false; stage: string; errno: number; message: string }

/** A scratch layout for one canary: DIR/allowed (its temp dir), DIR/readable; removed by `dispose`. */
export function canaryDir(): { dir: string; allowed: string; dispose: () => void } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-probe-')))
  fs.mkdirSync(path.join(dir, 'allowed'))
  fs.writeFileSync(path.join(dir, 'readable'), 'canary\n')
  return { dir, allowed: path.join(dir, 'allowed'), dispose: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Live (non-zombie: PID 1 reaps late on some hosts) processes of the host whose argv holds
 * `marker` — the canary's grandchild carries the canary's argv, and its pid inside a pid
 * namespace would mean nothing here.
 */
export function processesWith(marker: string): number[] {
  const found: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (!fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(marker)) continue
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1')
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state !== 'Z' && state !== 'X') found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/**
 * Runs a confined canary spec (stdout and stderr collected) within `timeoutMs`; its argv is
 * `cordon-exec canary DIR …`, DIR being `dir` (a resident instance's own argv names DIR too, in its
 * rules: only the canary's argv counts).
 */
export async function runCanary(spec: SubprocessSpawnSpec, timeoutMs: number, dir: string): Promise<CanaryRun> {
  const runtime = new LocalSubprocessRuntime()
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    const handle = runtime.spawn({
      ...spec,
      signal,
      stdio: { stdin: 'ignore', stdout: { maxBytes: 65536 }, stderr: { maxBytes: 65536 } },
    })
    const outcome = await handle.done
    await handle.waitForExit()
    const report = parseCanary(handle.collected.stdout?.readFrom(0).text ?? '')
    const orphanGone = processesWith(`\0canary\0${dir}\0`).length === 0
    return {
      ran: true,
      report,
      exitCode: outcome.exitCode,
      stderr: handle.collected.stderr?.readFrom(0).text ?? '',
      orphanGone,
    }
  } catch (error) {
    if (isSpawnError(error)) return { ran: false, stage: error.stage, errno: error.errno, message: error.message }
    return { ran: false, stage: 'launcher', errno: 0, message: error instanceof Error ? error.message : String(error) }
  } finally {
    await runtime.dispose()
  }
}

/** The host's own namespace ids, to tell a private namespace from the host's. */
export function hostNamespaces(): { ipcNamespace: string; netNamespace: string } {
  const read = (kind: string) => {
    try {
      return fs.readlinkSync(`/proc/self/ns/${kind}`)
    } catch {
      return '?'
    }
  }
  return { ipcNamespace: read('ipc'), netNamespace: read('net') }
}

/**
 * A probe's way to finish: the capability of `backend` with its limitations and the probe's wall
 * time since this call, whatever the verdict.
 */
export function probeFinisher(
  backend: SandboxBackendName,
  limitations: readonly string[],
): (cap: Omit<BackendCapability, 'probeMs' | 'backend' | 'limitations'>) => BackendCapability {
  const started = performance.now()
  return (cap) => ({ backend, limitations: [...limitations], ...cap, probeMs: performance.now() - started })
}
