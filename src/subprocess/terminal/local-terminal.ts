/**
 * spawnTerminal on this host (seed 003): one program leading its own session on a pty that
 * node-pty allocates, behind SubprocessTerminalHandle.
 *
 * The program is forked by node-pty (forkpty: a new session whose controlling terminal is the
 * pty's slave), so the top process is the session leader and its pid is the session id. argv is
 * opaque here: a confined terminal is the same request with a launcher (`cordon-exec … --`) in
 * front of the program, and everything below keys on the session id, never on a program name.
 * The one thing a launcher changes is which group is the program's own: structurally a launcher
 * with its program looks exactly like a shell with a job, so the spec says so (`launcher: true`)
 * and the launcher's first child is then the program (its group is protected from SIGKILL by
 * signalForeground and reported as `programGroup`).
 *
 * What this provider can observe (Linux, /proc):
 * - the top process's exit, exactly (node-pty reaps it on its own thread);
 * - every process that keeps the session id, and every descendant of one of them or of the top
 *   process, even after it left the session, while its parent is alive;
 * - the foreground group (`tpgid`), its leader's command, and whether a foreground thread is
 *   blocked reading this terminal (see inspect.ts).
 * What it cannot observe:
 * - a process that left the session (setsid) and whose parent has already exited: it is
 *   reparented to PID 1 (or the host's subreaper) and is indistinguishable from a stranger.
 *   Under a supervising launcher (`cordon-exec`, the session leader and a subreaper) such
 *   orphans stay its descendants, so the sweep reaches them;
 * - processes in another pid namespace than the host's view of /proc;
 * - a pid recycled between one /proc scan and the signal sent to it (the window is one scan;
 *   the top process itself is only signalled while unreaped, the session only while its
 *   leader's number is held or the leader's start time still matches).
 * Output: the master is read as bytes and decoded here (output.ts). libuv ends the
 * master's stream early when the last slave closes (poll reports the hangup while output is still
 * queued); the rest is read straight from the descriptor before it closes, so the output is whole.
 * node-pty sets IUTF8 only when it decodes the master itself, so it is off: in canonical mode an
 * erase removes one byte of a multi-byte character (shells, REPLs and editors edit lines in raw
 * mode and are unaffected).
 *
 * Descriptors: node-pty forks from the host without closing descriptors and opens its masters
 * without close-on-exec; each master is marked close-on-exec right after its fork, so no later
 * child of the host (another terminal's program above all) inherits it. A host fd that lacks the
 * flag for another reason (one the host itself inherited) still reaches an unconfined program; a
 * confined terminal's launcher (`cordon-exec init --terminal`) closes every fd above 2 first, and
 * the program it forks holds only the pty on 0..2.
 *
 * Teardown (`terminate()`), one ladder for the whole session: SIGHUP to the leader (interactive
 * shells ignore SIGTERM; a hangup is a terminal's own "go away", and makes bash hang up its
 * jobs), SIGTERM to every member and SIGCONT to stopped ones (a stopped process acts on nothing
 * else); up to graceMs for the session to empty; then SIGKILL, re-scanned until no member is
 * left; then the wait for the top process to be reaped. "Empty" also covers every process the
 * teardown saw (by pid and start time): one that left the session and lost its parent mid-way is
 * still waited for. Any survivor is a TerminalCleanupError naming its pid. Zombies count as dead.
 */
import { accessSync, existsSync, constants as fsConstants, readlinkSync, readSync, statSync } from 'node:fs'
import { constants as osConstants } from 'node:os'
import { delimiter, isAbsolute, join, resolve as resolvePath } from 'node:path'
import { InvalidRequestError, SpawnError } from '../../policy/errors.js'
import { envToArray, mergeEnv, scrubbedParentEnv } from '../env/scrub.js'
import { loadNative, type NativeAddon } from '../native.js'
import { TERMINAL_PROC_REMEDY, TerminalCleanupError, TerminalUnavailableError } from './errors.js'
import { inspectForeground } from './inspect.js'
import { TerminalOutput } from './output.js'
import type { PtyLoader, PtyProcess } from './pty.js'
import {
  isDead,
  isStopped,
  ptsPathOf,
  readStat,
  sessionIdReused,
  sessionProcesses,
  type ProcStat,
  type SessionIdentity,
} from './session.js'
import { validateSignalName, validateTerminalSize, validateTerminalSpec } from '../spec/terminal-schema.js'
import type {
  SubprocessOutcome,
  SubprocessTerminalDisposable,
  SubprocessTerminalForeground,
  SubprocessTerminalHandle,
  SubprocessTerminalSpawnSpec,
} from '../types.js'

/** The terminal type when the environment names none (the reference's pty name). */
export const DEFAULT_TERM = 'dumb'

/** Our own bookkeeping latency after the last member died (node-pty's reap thread, the master's EIO). */
const REAP_WAIT_MS = 2000
/** How long the SIGKILL sweep keeps re-scanning at least (a process in D state dies late). */
const KILL_SWEEP_MS = 1000
/** Bytes per read when draining a master after a premature EOF. */
const DRAIN_CHUNK = 65_536
/** How long a question to a just-forked terminal waits for the child to take the pty as its terminal. */
const ACQUIRE_WAIT_MS = 500
/** How often a session whose top process exited, leaving members behind, is re-checked. */
const LEFTOVER_CHECK_MS = 1000

const SIGNAL_NAMES: ReadonlyMap<number, NodeJS.Signals> = new Map(
  Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
)

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Sends `signal` to `pid`; false when it is already gone (ESRCH), throws on anything else. */
function kill(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

/** kill() for the teardown: a process it may not signal (EPERM, a setuid member) stays and is named a survivor. */
function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {
    // gone, or not ours to signal: the final sweep tells which
  }
}

/** An AbortError (Node's `ABORT_ERR`) carrying the signal's reason. */
function abortError(prefix: string, signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  const error = new Error(
    `${prefix}: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`,
    reason === undefined ? undefined : { cause: reason },
  )
  return Object.assign(error, { name: 'AbortError', code: 'ABORT_ERR' })
}

/** The program's environment: exactly `spawn`'s (scrub, then the overrides), minus unrepresentable entries. */
function terminalEnv(overrides: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>
  for (const entry of envToArray(mergeEnv(scrubbedParentEnv(), overrides))) {
    const eq = entry.indexOf('=')
    env[entry.slice(0, eq)] = entry.slice(eq + 1)
  }
  return env
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, fsConstants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * Fails the allocation with a SpawnError the way `spawn` would (chdir, exec) instead of letting
 * node-pty's child print `execvp(3) failed` into the terminal and exit 1. The program is looked
 * up as the child's execvp will: by path when it holds a slash (relative to cwd), else on the
 * child's own PATH (glibc's default when it has none). Synchronous: a few stat calls cost less
 * than the thread-pool round trips of their async forms.
 */
function checkProgram(spec: SubprocessTerminalSpawnSpec, env: Record<string, string>): void {
  const cwdStat = statSync(spec.cwd, { throwIfNoEntry: false })
  if (!cwdStat?.isDirectory()) {
    const errno = cwdStat ? osConstants.errno.ENOTDIR : osConstants.errno.ENOENT
    throw new SpawnError({ stage: 'chdir', errno, path: spec.cwd })
  }
  const program = spec.argv[0]!
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolvePath(spec.cwd, program)
    if (isExecutableFile(path)) return
    const exists = statSync(path, { throwIfNoEntry: false }) !== undefined
    throw new SpawnError({ stage: 'exec', errno: exists ? osConstants.errno.EACCES : osConstants.errno.ENOENT, path })
  }
  for (const dir of (env.PATH ?? '/bin:/usr/bin').split(delimiter)) {
    if (dir !== '' && isExecutableFile(join(isAbsolute(dir) ? dir : resolvePath(spec.cwd, dir), program))) return
  }
  throw new SpawnError({ stage: 'exec', errno: osConstants.errno.ENOENT, path: program })
}

/** What spawnLocalTerminal needs from its runtime. */
export interface LocalTerminalHooks {
  /** Loads node-pty (or a stand-in module with its shape). */
  loadPty: PtyLoader
  /** Runs synchronously right before the fork; throwing refuses the allocation (a disposed runtime). */
  beforeFork?: () => void
  /** Runs synchronously right after the fork, with the live handle (the runtime takes ownership). */
  afterFork?: (terminal: LocalTerminal) => void
  /** Called once the top process is reaped and no member of the session is left. */
  onGone?: (terminal: LocalTerminal) => void
}

/** Validates, loads node-pty, checks the program and cwd, then forks the terminal. */
export async function spawnLocalTerminal(
  spec: SubprocessTerminalSpawnSpec,
  hooks: LocalTerminalHooks,
): Promise<LocalTerminal> {
  validateTerminalSpec(spec)
  if (spec.signal?.aborted) throw abortError('aborted before spawn', spec.signal)
  if (!existsSync('/proc/self/stat')) {
    throw new TerminalUnavailableError(new Error(`no /proc on ${process.platform}`), {
      what: 'this provider cannot observe a terminal session here',
      remedy: TERMINAL_PROC_REMEDY,
    })
  }
  const env = terminalEnv(spec.env)
  const pty = await hooks.loadPty()
  if (spec.signal?.aborted) throw abortError('terminal allocation aborted', spec.signal)
  checkProgram(spec, env)
  const native = loadNative() // before the fork: a missing addon refuses the allocation
  const handed = handOver(spec, native)
  const argv = handed?.argv ?? spec.argv
  hooks.beforeFork?.()
  let proc: PtyProcess
  try {
    proc = pty.spawn(argv[0]!, argv.slice(1), {
      name: env.TERM ?? DEFAULT_TERM,
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env,
      encoding: null,
    })
  } catch (error) {
    // forkpty(3) failed (no pty left, fork refused): node-pty says so without an errno.
    throw new SpawnError({
      stage: 'clone',
      errno: 0,
      path: spec.argv[0],
      detail: 'node-pty could not fork a terminal',
      cause: error,
    })
  } finally {
    // node-pty forked synchronously: the launcher holds its copy now, the host needs none.
    if (handed !== undefined) native.closeFd(handed.fd)
  }
  // node-pty opens masters without close-on-exec: every later child of the host (the next
  // terminal's program above all, which node-pty forks without closing anything) would hold this
  // terminal's master, reading its input and keeping it from hanging up.
  if (typeof proc.fd === 'number') native.setCloexec(proc.fd)
  const terminal = new LocalTerminal(proc, { graceMs: spec.graceMs, launcher: spec.launcher === true }, hooks.onGone)
  // The next terminal of this plan gets a ruleset built while nothing starts.
  const prepare = spec.ruleset?.prepareNext
  if (prepare) void terminal.done.finally(() => setImmediate(prepare))
  hooks.afterFork?.(terminal)
  return terminal
}

/** The argv word a confined terminal's `--ruleset-fd` carries until the spawn names the fd. */
export const RULESET_FD_PLACEHOLDER = '@ruleset'

/**
 * The spec's ruleset, built anew and made inheritable for the next fork (node-pty closes nothing),
 * and the argv naming it. Refuses (stage landlock) a ruleset whose sandbox is disposed, or an argv
 * that does not ask for it. Each spawn gets its own ruleset object: a descriptor another thread's
 * child inherits in the same instant can reach no ruleset a later run uses.
 */
function handOver(spec: SubprocessTerminalSpawnSpec, native: NativeAddon): { fd: number; argv: string[] } | undefined {
  const ruleset = spec.ruleset
  if (ruleset === undefined) return undefined
  const at = spec.argv.findIndex((a, i) => a === RULESET_FD_PLACEHOLDER && spec.argv[i - 1] === '--ruleset-fd')
  if (ruleset.closed || at < 0) {
    throw new SpawnError({
      stage: 'landlock',
      errno: 9, // EBADF
      detail: ruleset.closed
        ? "the terminal's sandbox was disposed: nothing was run"
        : "the terminal's argv does not ask for its ruleset",
    })
  }
  let fd: number
  try {
    fd = ruleset.fresh()
  } catch (error) {
    const errno = (error as { errno?: unknown }).errno
    throw new SpawnError({
      stage: 'landlock',
      errno: typeof errno === 'number' ? errno : 22,
      detail: "the terminal's ruleset could not be built",
      cause: error,
    })
  }
  const rc = native.setCloexec(fd, false)
  if (rc !== 0) {
    native.closeFd(fd)
    throw new SpawnError({ stage: 'landlock', errno: -rc, detail: "the terminal's ruleset cannot be handed over" })
  }
  const argv = [...spec.argv]
  argv[at] = String(fd)
  return { fd, argv }
}

/** One live terminal session; see SubprocessTerminalHandle for the contract of each member. */
export class LocalTerminal implements SubprocessTerminalHandle {
  readonly pid: number
  readonly done: Promise<SubprocessOutcome>

  private readonly identity: SessionIdentity
  private readonly output: TerminalOutput
  private outcome: SubprocessOutcome | undefined
  private pts: string | undefined
  private teardown: Promise<void> | undefined
  private sessionGone = false
  private acquired = false
  private leftoverTimer: NodeJS.Timeout | undefined

  private readonly graceMs: number
  private readonly launcher: boolean
  /** Under a launcher: its first child, the program (pid and start time), once seen. */
  private program: { pid: number; startTime: string } | undefined

  constructor(
    private readonly pty: PtyProcess,
    options: { graceMs: number; launcher: boolean },
    private readonly onGone: ((terminal: LocalTerminal) => void) | undefined,
  ) {
    this.pid = pty.pid
    this.graceMs = options.graceMs
    this.launcher = options.launcher
    // Read at once: the leader is our unreaped child, so this is its identity for the session's life.
    this.identity = { sid: pty.pid, leaderStartTime: readStat(pty.pid)?.startTime }
    this.pts = pty.ptsName
    this.output = new TerminalOutput({ pause: () => pty.pause(), resume: () => pty.resume() })
    pty.on?.('error', () => {}) // a read error ends the master like EIO; node-pty rethrows without a listener
    pty.onData((data) => this.output.push(data))
    pty.on?.('end', () => this.drainMaster())
    this.done = new Promise((resolve) => {
      pty.onExit(({ exitCode, signal }) => {
        // node-pty emits this after the reap and after the master stopped reading: the queued
        // output has been delivered, so the output ends here.
        this.output.end()
        this.outcome =
          signal !== undefined && signal !== 0
            ? { exitCode: null, signal: SIGNAL_NAMES.get(signal) ?? (`SIG${signal}` as NodeJS.Signals) }
            : { exitCode, signal: null }
        resolve(this.outcome)
        // The sweep reads every process's stat: after the callers awaiting `done` have run.
        setImmediate(() => this.checkLeftovers())
      })
    })
  }

  /** Whether the top process is reaped and no member of the session is left. */
  get gone(): boolean {
    return this.sessionGone
  }

  /** Calls `listener` with each later chunk of output (node-pty's shape). */
  onData(listener: (text: string) => void): SubprocessTerminalDisposable {
    return this.output.onData(listener)
  }

  /** Every later chunk of output, ending with the output. */
  [Symbol.asyncIterator](): AsyncIterator<string> {
    return this.output.iterate()
  }

  /** Types `data` into the terminal; false once it has closed. */
  write(data: string | Uint8Array): boolean {
    if (this.output.ended) return false
    this.pty.write(typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength))
    return true
  }

  /** Resizes the terminal (its foreground job gets SIGWINCH); a no-op once it has closed. */
  resize(cols: number, rows: number): void {
    validateTerminalSize(cols, rows)
    if (this.output.ended) return
    try {
      this.pty.resize(cols, rows)
    } catch {
      // the master closed between the check and the ioctl: nothing is left to resize
    }
  }

  /** The foreground job now (see inspect.ts); undefined when no member is left. */
  async inspectForeground(): Promise<SubprocessTerminalForeground | undefined> {
    await this.terminalAcquired()
    if (this.sessionGone) return undefined
    const pts = this.ptsPath()
    return pts === undefined ? undefined : inspectForeground(this.identity, pts, this.programPgid())
  }

  /** Sends `signal` to the foreground group; refuses SIGKILL to the leader's own group; false when no member is left. */
  async signalForeground(signal: NodeJS.Signals): Promise<boolean> {
    validateSignalName(signal)
    await this.terminalAcquired()
    if (this.sessionGone) return false
    const pgid = this.foregroundGroup()
    if (pgid === undefined) return false
    if (signal === 'SIGKILL' && (pgid === this.identity.sid || pgid === this.programPgid())) {
      const whose = pgid === this.identity.sid ? "the session leader's own group" : "the program's own group"
      throw new InvalidRequestError([
        `signal: refusing to SIGKILL ${whose} (pgid ${pgid}); terminate() ends the session`,
      ])
    }
    return kill(-pgid, signal)
  }

  /** TERM, grace, KILL, sweep; resolves when the top is reaped and no member is alive. Idempotent. */
  terminate(): Promise<void> {
    this.teardown ??= this.runTeardown().catch((error: unknown) => {
      this.teardown = undefined // a later call tries again
      throw error
    })
    return this.teardown
  }

  /** SIGKILL to every observable member now, synchronously (the host is exiting). */
  forceKillNow(): void {
    if (this.sessionGone) return
    for (const p of this.members()) tryKill(p.pid, 'SIGKILL')
    this.signalTop('SIGKILL')
  }

  /** The live processes of the session (zombies excluded); empty once it is known to be gone. */
  members(): ProcStat[] {
    if (this.sessionGone) return []
    return sessionProcesses(this.identity)
  }

  /**
   * Reads what the kernel still holds for the master after a premature EOF. libuv ends a stream
   * when poll reports a hangup after a short read, but a pty master reports the hangup as soon as
   * the last slave closes, with up to a few KiB of output still queued; the kernel itself hands
   * all of it over and then fails with EIO. 'end' runs before the socket closes the descriptor,
   * and the descriptor is checked to still be a pty master before it is read.
   */
  private drainMaster(): void {
    const fd = this.pty.fd
    if (fd === undefined) return
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== '/dev/ptmx') return
    } catch {
      return
    }
    const buf = Buffer.allocUnsafe(DRAIN_CHUNK)
    for (;;) {
      let n: number
      try {
        n = readSync(fd, buf, 0, buf.length, null)
      } catch {
        return // EIO (all delivered), EAGAIN (a slave is still open), EBADF
      }
      if (n <= 0) return
      this.output.push(Buffer.from(buf.subarray(0, n)))
    }
  }

  /** The slave's path: node-pty's, else decoded from a member's controlling-terminal device. */
  private ptsPath(): string | undefined {
    if (this.pts === undefined) {
      for (const p of this.members()) {
        const path = p.ttyNr === 0 ? undefined : ptsPathOf(p.ttyNr)
        if (path) {
          this.pts = path
          break
        }
      }
    }
    return this.pts
  }

  /**
   * The program's process group: the leader's own, or under a launcher the first group started
   * below the launcher's own group (the earliest-started process that leads a group of its own
   * and whose parent is in the leader's group: the launcher itself, or a wrapper such as bwrap's
   * init standing between; jobs the program starts have the program as parent, and orphans the
   * launcher adopts later start later). Undefined while a launcher has not started the program yet.
   */
  private programPgid(): number | undefined {
    if (!this.launcher) return this.identity.sid
    if (this.program === undefined && !this.sessionGone) {
      const members = this.members()
      const byPid = new Map(members.map((p) => [p.pid, p]))
      let first: ProcStat | undefined
      for (const p of members) {
        if (p.pgrp !== p.pid || p.pid === this.identity.sid || p.session !== this.identity.sid) continue
        const parent = byPid.get(p.ppid)
        if (parent?.pgrp !== this.identity.sid) continue
        if (!first || BigInt(p.startTime) < BigInt(first.startTime)) first = p
      }
      if (first) this.program = { pid: first.pid, startTime: first.startTime }
    }
    return this.program?.pid
  }

  /**
   * Waits (briefly) for the terminal to be set up: forkpty returns in the host before the child has
   * made the pty its controlling terminal, and a launcher needs a moment more to start the program
   * and hand it the foreground; a question asked at once would find neither.
   */
  private async terminalAcquired(): Promise<void> {
    const deadline = Date.now() + ACQUIRE_WAIT_MS
    while (!this.acquired && this.outcome === undefined && Date.now() <= deadline) {
      const leader = readStat(this.pid)
      if (!leader || leader.state === 'Z') break
      const program = this.programPgid()
      // Under a launcher: the program exists and the launcher has handed the foreground on.
      if (leader.tpgid > 0 && (!this.launcher || (program !== undefined && leader.tpgid !== this.pid))) break
      await sleep(1)
    }
    this.acquired = true
  }

  /** The terminal's foreground group, from the stat of a live member (the leader first). */
  private foregroundGroup(): number | undefined {
    if (sessionIdReused(this.identity)) return undefined
    const leader = this.outcome === undefined ? readStat(this.pid) : undefined
    if (leader && leader.state !== 'Z' && leader.tpgid > 0) return leader.tpgid
    for (const p of sessionProcesses(this.identity)) {
      const s = readStat(p.pid)
      if (s && s.session === this.identity.sid && s.tpgid > 0) return s.tpgid
    }
    return undefined
  }

  private markGone(): void {
    if (this.sessionGone) return
    this.sessionGone = true
    if (this.leftoverTimer) clearInterval(this.leftoverTimer)
    this.leftoverTimer = undefined
    this.onGone?.(this)
  }

  /** After the top exits: gone at once when nothing is left, else re-checked until it is (or a teardown runs). */
  private checkLeftovers(): void {
    if (this.members().length === 0) {
      this.markGone()
      return
    }
    this.leftoverTimer = setInterval(() => {
      if (this.members().length === 0) this.markGone()
    }, LEFTOVER_CHECK_MS)
    this.leftoverTimer.unref()
  }

  /**
   * The processes this teardown still waits for: every member now, and every process it saw
   * before, by pid and start time. A process that left the session (setsid) is a member only
   * while its parent lives; once signalled it is waited for until it is dead, even after its
   * parent died first and it went to PID 1.
   */
  private remaining(seen: Map<number, string>): ProcStat[] {
    for (const p of this.members()) seen.set(p.pid, p.startTime)
    const out: ProcStat[] = []
    for (const [pid, startTime] of seen) {
      const stat = readStat(pid)
      if (stat && !isDead(stat) && stat.startTime === startTime) out.push(stat)
      else seen.delete(pid)
    }
    return out
  }

  /** Polls until nothing `remaining` is alive or `ms` passes; true when the session emptied. */
  private async emptyWithin(ms: number, seen: Map<number, string>): Promise<boolean> {
    const deadline = Date.now() + ms
    let delay = 2
    for (;;) {
      if (this.remaining(seen).length === 0) return true
      if (Date.now() >= deadline) return false
      const pause = sleep(Math.min(delay, Math.max(1, deadline - Date.now())))
      // The top's exit wakes the wait early, but only once: a settled `done` would spin the loop.
      await (this.outcome === undefined ? Promise.race([pause, this.done]) : pause)
      delay = Math.min(delay * 2, 50)
    }
  }

  /**
   * Signals the top process by pid while it is still ours: node-pty reaps it on its own thread and
   * reports the exit later (up to 200 ms when members hold the terminal), so "no exit event yet"
   * alone does not prove the pid is unrecycled; its start time does.
   */
  private signalTop(signal: NodeJS.Signals): void {
    if (this.outcome !== undefined) return
    const top = readStat(this.pid)
    if (top && top.startTime === this.identity.leaderStartTime) tryKill(this.pid, signal)
  }

  /** Whether the top process is reaped within `ms` (the timer is cleared so it holds no host open). */
  private reapedWithin(ms: number): Promise<boolean> {
    if (this.outcome !== undefined) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms)
      void this.done.then(() => {
        clearTimeout(timer)
        resolve(true)
      })
    })
  }

  private async runTeardown(): Promise<void> {
    if (this.sessionGone) return
    const gentle = this.members()
    const seen = new Map(gentle.map((p) => [p.pid, p.startTime]))
    this.signalTop('SIGHUP')
    for (const p of gentle) {
      tryKill(p.pid, 'SIGTERM')
      if (isStopped(p)) tryKill(p.pid, 'SIGCONT')
    }
    if (!(await this.emptyWithin(this.graceMs, seen))) {
      // Re-scan while killing: a member may fork between one scan and the next.
      const deadline = Date.now() + Math.max(this.graceMs, KILL_SWEEP_MS)
      let delay = 2
      for (;;) {
        const live = this.remaining(seen)
        if (live.length === 0 || Date.now() >= deadline) break
        for (const p of live) tryKill(p.pid, 'SIGKILL')
        await sleep(delay)
        delay = Math.min(delay * 2, 50)
      }
    }
    const reaped = await this.reapedWithin(REAP_WAIT_MS)
    const survivors = this.remaining(seen).map((p) => p.pid)
    if (!reaped && !survivors.includes(this.pid)) survivors.push(this.pid)
    if (survivors.length > 0) {
      throw new TerminalCleanupError(survivors, { topProcessAlive: !reaped })
    }
    this.markGone()
  }
}
