/**
 * One live terminal session (seed 003's SubprocessTerminalHandle): a program leading its own
 * session on a pty node-pty allocated (spawn.ts forks it). Everything keys on the
 * session id (the top process's pid), never on a program name: a confined terminal is the same
 * session with a launcher (`cordon-exec … --`) in front, whose first child is the program. What
 * /proc lets it observe, and what not, is in session.ts; the teardown ladder is teardown.ts.
 */
import { readlinkSync, readSync } from 'node:fs'
import { constants as osConstants } from 'node:os'
import { InvalidRequestError } from '../../policy/errors.js'
import { validateSignalName, validateTerminalSize } from '../spec/terminal-schema.js'
import type { NetworkFacts } from '../../policy/network/facts.js'
import { loadNative } from '../native.js'
import type {
  ProxiedNetwork,
  SubprocessOutcome,
  SubprocessTerminalDisposable,
  SubprocessTerminalForeground,
  SubprocessTerminalHandle,
  TerminalAftermath,
} from '../types.js'
import { inspectForeground } from './inspect.js'
import { TerminalOutput } from './output.js'
import type { PtyProcess } from './pty.js'
import {
  type ProcStat,
  programGroupLeader,
  ptsPathOf,
  readStat,
  type SessionIdentity,
  sessionIdReused,
  sessionProcesses,
} from './session.js'
import { tearDownSession, tryKill } from './teardown.js'
import { restoreLinks, takeAwayAppeared } from '../process/must-not-appear.js'

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
  private readonly aftermath: TerminalAftermath | undefined
  private proxied: { finish(): NetworkFacts } | undefined
  private networkFacts: NetworkFacts | undefined
  private refused: string[] | undefined
  /** Under a launcher: its first child, the program (pid and start time), once seen. */
  private program: { pid: number; startTime: string } | undefined

  constructor(
    private readonly pty: PtyProcess,
    options: { graceMs: number; launcher: boolean; aftermath?: TerminalAftermath | undefined },
    private readonly onGone: ((terminal: LocalTerminal) => void) | undefined,
  ) {
    this.pid = pty.pid
    this.graceMs = options.graceMs
    this.launcher = options.launcher
    this.aftermath = options.aftermath
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

  /** The program's process group: the leader's own, or under a launcher its program's (session.ts:programGroupLeader). */
  private programPgid(): number | undefined {
    if (!this.launcher) return this.identity.sid
    if (this.program === undefined && !this.sessionGone) {
      const first = programGroupLeader(this.members(), this.identity.sid)
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
    // Only now, with nothing of the session left to recreate them (as a spawn's tree).
    const { mustNotAppear = [], mustStay = [] } = this.aftermath ?? {}
    if (mustNotAppear.length > 0 || mustStay.length > 0)
      this.refused = [...takeAwayAppeared(mustNotAppear), ...restoreLinks(mustStay)]
    // Nothing of the session can connect any more: the proxy's facts are final.
    this.networkFacts = this.proxied?.finish()
    this.proxied = undefined
    this.onGone?.(this)
  }

  /** Serves the session's proxy listener through `network` until the session is gone. */
  serveNetwork(network: ProxiedNetwork, fd: number): void {
    if (this.sessionGone) loadNative().closeFd(fd)
    else this.proxied = network.serve(fd)
  }

  /** What the network allow-list's proxy saw of the session, once it is gone. */
  get network(): NetworkFacts | undefined {
    return this.networkFacts
  }

  /** The aftermath paths the session created or changed, moved aside once it was gone. */
  get refusedPaths(): readonly string[] | undefined {
    return this.refused
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
   * Signals the top process by pid while it is still ours: node-pty reaps it on its own thread and
   * reports the exit later (up to 200 ms when members hold the terminal), so "no exit event yet"
   * alone does not prove the pid is unrecycled; its start time does.
   */
  private signalTop(signal: NodeJS.Signals): void {
    if (this.outcome !== undefined) return
    const top = readStat(this.pid)
    if (top && top.startTime === this.identity.leaderStartTime) tryKill(this.pid, signal)
  }

  private async runTeardown(): Promise<void> {
    if (this.sessionGone) return
    await tearDownSession({
      pid: this.pid,
      graceMs: this.graceMs,
      done: this.done,
      topReaped: () => this.outcome !== undefined,
      members: () => this.members(),
      signalTop: (signal) => this.signalTop(signal),
    })
    this.markGone()
  }
}
