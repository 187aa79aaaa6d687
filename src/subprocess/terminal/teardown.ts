/**
 * A terminal session's teardown, one ladder for the whole session: SIGHUP to the leader
 * (interactive shells ignore SIGTERM; a hangup is a terminal's own "go away", and makes bash hang
 * up its jobs), SIGTERM to every member and SIGCONT to stopped ones (a stopped process acts on
 * nothing else); up to graceMs for the session to empty; then SIGKILL, re-scanned until no member
 * is left; then the wait for the top process to be reaped. "Empty" also covers every process the
 * teardown saw (by pid and start time): one that left the session and lost its parent mid-way is
 * still waited for. Any survivor is a TerminalCleanupError naming its pid. Zombies count as dead.
 */
import { TerminalCleanupError } from './errors.js'
import { isDead, isStopped, type ProcStat, readStat } from './session.js'

/** Our own bookkeeping latency after the last member died (node-pty's reap thread, the master's EIO). */
const REAP_WAIT_MS = 2000
/** How long the SIGKILL sweep keeps re-scanning at least (a process in D state dies late). */
const KILL_SWEEP_MS = 1000

/** The session as its teardown sees it. */
export interface TeardownTarget {
  /** The top process (the session leader). */
  readonly pid: number
  readonly graceMs: number
  /** Settles once the top process is reaped. */
  readonly done: Promise<unknown>
  /** Whether the top process is reaped already. */
  topReaped(): boolean
  /** The live members of the session now. */
  members(): ProcStat[]
  /** Signals the top process while it is still ours. */
  signalTop(signal: NodeJS.Signals): void
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Sends `signal` to `pid`; a process it may not signal (EPERM, a setuid member) stays and is named a survivor. */
export function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {
    // gone, or not ours to signal: the final sweep tells which
  }
}

/**
 * The processes the teardown still waits for: every member now, and every process it saw
 * before, by pid and start time. A process that left the session (setsid) is a member only
 * while its parent lives; once signalled it is waited for until it is dead, even after its
 * parent died first and it went to PID 1.
 */
function remaining(target: TeardownTarget, seen: Map<number, string>): ProcStat[] {
  for (const p of target.members()) seen.set(p.pid, p.startTime)
  const out: ProcStat[] = []
  for (const [pid, startTime] of seen) {
    const stat = readStat(pid)
    if (stat && !isDead(stat) && stat.startTime === startTime) out.push(stat)
    else seen.delete(pid)
  }
  return out
}

/** Polls until nothing `remaining` is alive or `ms` passes; true when the session emptied. */
async function emptyWithin(target: TeardownTarget, ms: number, seen: Map<number, string>): Promise<boolean> {
  const deadline = Date.now() + ms
  let delay = 2
  for (;;) {
    if (remaining(target, seen).length === 0) return true
    if (Date.now() >= deadline) return false
    const pause = sleep(Math.min(delay, Math.max(1, deadline - Date.now())))
    // The top's exit wakes the wait early, but only once: a settled `done` would spin the loop.
    await (target.topReaped() ? pause : Promise.race([pause, target.done]))
    delay = Math.min(delay * 2, 50)
  }
}

/** SIGKILL to everything remaining, re-scanned (a member may fork between scans) until none is left or time is up. */
async function killSweep(target: TeardownTarget, seen: Map<number, string>): Promise<void> {
  const deadline = Date.now() + Math.max(target.graceMs, KILL_SWEEP_MS)
  let delay = 2
  for (;;) {
    const live = remaining(target, seen)
    if (live.length === 0 || Date.now() >= deadline) return
    for (const p of live) tryKill(p.pid, 'SIGKILL')
    await sleep(delay)
    delay = Math.min(delay * 2, 50)
  }
}

/** Whether the top process is reaped within `ms` (the timer is cleared so it holds no host open). */
function reapedWithin(target: TeardownTarget, ms: number): Promise<boolean> {
  if (target.topReaped()) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    void target.done.then(() => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

/** Runs the ladder (see the module comment); resolves once nothing is left, else throws TerminalCleanupError. */
export async function tearDownSession(target: TeardownTarget): Promise<void> {
  const gentle = target.members()
  const seen = new Map(gentle.map((p) => [p.pid, p.startTime]))
  target.signalTop('SIGHUP')
  for (const p of gentle) {
    tryKill(p.pid, 'SIGTERM')
    if (isStopped(p)) tryKill(p.pid, 'SIGCONT')
  }
  if (!(await emptyWithin(target, target.graceMs, seen))) await killSweep(target, seen)
  const reaped = await reapedWithin(target, REAP_WAIT_MS)
  const survivors = remaining(target, seen).map((p) => p.pid)
  if (!reaped && !survivors.includes(target.pid)) survivors.push(target.pid)
  if (survivors.length > 0) {
    throw new TerminalCleanupError(survivors, { topProcessAlive: !reaped })
  }
}
