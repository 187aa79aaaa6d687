/**
 * One spawned process tree behind the seed's SubprocessHandle: wiring of its streams, bounded
 * collection, the exit facts, tree-scoped termination and the wait for the whole tree.
 *
 * The tree is the child's process group (`direct`), or everything below the run's supervisor
 * (`launched`, `wrapped`: see launch-kind.ts), whose own exit means "tree gone". A supervisor
 * reports the command's exit on a status pipe and owns termination: the host signals it, it
 * forwards to the whole tree and escalates to SIGKILL after the grace.
 *
 * Children start through a ChildSpawner: the native addon (the default), or node:child_process
 * on the portable path (portable/spawner.ts); everything else here is the same for both.
 */
import { restoreLinks, takeAwayAppeared } from './must-not-appear.js'
import { fstatSync, statSync } from 'node:fs'
import type { Socket } from 'node:net'
import { isSpawnError, SpawnError, type SpawnStage } from '../../policy/errors.js'
import {
  type Child,
  type ChildExit,
  type ChildOptions,
  type ChildReader,
  childOf,
  type OutputPipe,
  outputPipe,
  programOf,
  signalName,
  signalNumber,
  socketFor,
  startChild,
} from './child.js'
import { OutputCollector } from '../collect.js'
import { type LaunchKind, launchKindOf, nativePlanOf, openRuleset } from './launch-kind.js'
import { launch } from '../launcher/launch.js'
import { tty } from '../lazy-builtins.js'
import { loadNative, Slot, type SlotValue } from '../native.js'
import { NativePipe } from '../output/native-pipe.js'
import { groupAlive } from './group.js'
import type {
  SubprocessCollect,
  SubprocessCollectedOutputs,
  SubprocessHandle,
  SubprocessOutcome,
  SubprocessOutputMode,
  SubprocessSpawnSpec,
} from '../types.js'

/** A process a wrapper named (its supervisor inside), held for signals until released. */
export interface PinnedProcess {
  signal(signal: number): void
  release(): void
}

/** A supervised run as a spawner without the native launcher starts it. */
export interface SupervisedLaunch {
  argv: readonly string[]
  env: readonly string[]
  cwd: string
  stdio: ChildOptions['stdio']
  graceMs: number
  background: boolean
  /** The spec carries a Landlock plan (only the native launcher can run it). */
  landlock: boolean
  onread: ChildOptions['onread']
}

/**
 * How children start: the native addon (clone child, pidfds, the launcher) or node:child_process
 * (portable/spawner.ts). Everything else a ManagedProcess does (collection, spill, exit facts,
 * termination, the wait for the tree) is the same for both.
 */
export interface ChildSpawner {
  readonly path: 'native' | 'portable'
  /** The cordon-exec helper the spawner supervises with (portable), when one exists. */
  readonly helper?: string | undefined
  /** How `spec` starts on this spawner. */
  kindOf(spec: SubprocessSpawnSpec): LaunchKind
  /** Starts a direct or wrapped child; throws SpawnError before anything ran. */
  startChild(options: ChildOptions, kind: LaunchKind): Child
  /** Starts a launched run without the native launcher; absent: the native launcher runs it. */
  launch?(launch: SupervisedLaunch): Child
  /** Pins the supervisor a wrapper names by pid; undefined when it is already gone. */
  pin(pid: number): PinnedProcess | undefined
}

/** The native spawner: the addon's clone child, its launcher, pidfds. */
export const NATIVE_SPAWNER: ChildSpawner = {
  path: 'native',
  kindOf: launchKindOf,
  startChild,
  pin(pid) {
    const native = loadNative()
    const fd = native.pidfdOpen(pid)
    if (fd < 0) return undefined
    let open = true
    return {
      signal(signal) {
        if (open) native.pidfdSignal(fd, signal)
      },
      release() {
        if (open) native.closeFd(fd)
        open = false
      },
    }
  },
}

/** Everything a ManagedProcess needs beyond the spec (the runtime prepares it). */
export interface ManagedProcessInit {
  spec: SubprocessSpawnSpec
  kind: LaunchKind
  /** The complete child environment, `K=V`. */
  env: string[]
  /** Lazily creates the private spill directory. */
  spillDir: () => string
  /** Called once the tree is known to be gone (the runtime drops the handle). */
  onTreeGone: (process: ManagedProcess) => void
  /** How children start (default: the native addon). */
  spawner?: ChildSpawner | undefined
}

/** How the host's own stdout/stderr is handed to a child: directly, or relayed through a pipe. */
type OutputWiring = 'pipe' | 'inherit' | 'relay' | 'collect'

const isCollect = (mode: SubprocessOutputMode): mode is SubprocessCollect => typeof mode === 'object'

let devNullRdev: number | undefined

/**
 * Whether the host's fd may reach a confined command as is: a pipe, /dev/null or a terminal. Any
 * other file is relayed through a pipe, so the command never holds the host's file itself
 * (fchmod, ftruncate or a reopen through /proc/self/fd would reach it outside every rule).
 */
function safeToInherit(fd: number): boolean {
  try {
    const st = fstatSync(fd)
    if (st.isFIFO() || tty().isatty(fd)) return true
    devNullRdev ??= statSync('/dev/null').rdev
    return st.isCharacterDevice() && st.rdev === devNullRdev
  } catch {
    return false
  }
}

function wiringOf(mode: SubprocessOutputMode, fd: 1 | 2, confined: boolean): OutputWiring {
  if (isCollect(mode)) return 'collect'
  if (mode === 'pipe') return 'pipe'
  return confined && !safeToInherit(fd) ? 'relay' : 'inherit'
}

/** Throws SpawnError at `landlock` (EBADF) when `fd` is not open: nothing is handed to the launcher. */
function assertOpen(fd: number): void {
  try {
    fstatSync(fd)
  } catch {
    throw new SpawnError({ stage: 'landlock', errno: 9, detail: `the ruleset fd ${fd} is not open` })
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The socket a pipe without a reader is (a NativePipe here is a wiring mistake). */
function asSocket(pipe: OutputPipe | undefined): Socket | undefined {
  if (pipe instanceof NativePipe) throw new Error('unreachable: a stream read natively was asked for as a socket')
  return pipe
}

/** Resolves when `socket` closes or `ms` passes, whichever is first (true when it closed). */
function closedWithin(socket: OutputPipe, ms: number): Promise<boolean> {
  if (socket.closed) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

/** One status line of a supervisor (`started N`, `error STAGE ERRNO`, `exit N`, `signal N`). */
export type StatusLine =
  | { kind: 'started' }
  | { kind: 'error'; stage: string; errno: number }
  | { kind: 'exit'; exit: ChildExit }
  | undefined

const DECIMAL = /^\d+$/

/** Parses one supervisor status line; undefined for anything else (a missing or non-numeric field included). */
export function parseStatusLine(line: string): StatusLine {
  const [word, a, b] = line.trim().split(' ')
  const number = (field: string | undefined) => (field !== undefined && DECIMAL.test(field) ? Number(field) : undefined)
  if (word === 'started' && number(a) !== undefined) return { kind: 'started' }
  const n = number(a)
  if (word === 'exit' && n !== undefined) return { kind: 'exit', exit: { exitCode: n, signal: null } }
  if (word === 'signal' && n !== undefined) return { kind: 'exit', exit: { exitCode: null, signal: signalName(n) } }
  const errno = number(b)
  if (word === 'error' && a !== undefined && errno !== undefined) return { kind: 'error', stage: a, errno }
  return undefined
}

/** Calls `onLine` for each complete line the fd carries (read natively), then `onEnd` at EOF. */
function nativeLines(fd: number, onLine: (line: string) => void, onEnd: () => void): void {
  let text = ''
  const buffer = Buffer.allocUnsafe(512)
  loadNative().readPipe(fd, buffer, (n) => {
    if (n <= 0) return onEnd()
    text += buffer.toString('latin1', 0, n)
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
      onLine(text.slice(0, nl))
      text = text.slice(nl + 1)
    }
  })
}

/** Calls `onLine` for each complete line the socket carries, then `onEnd` once it closes. */
function readLines(socket: Socket | undefined, onLine: (line: string) => void, onEnd: () => void): void {
  if (!socket) {
    onEnd()
    return
  }
  let text = ''
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1')
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
      onLine(text.slice(0, nl))
      text = text.slice(nl + 1)
    }
  })
  socket.on('error', () => {})
  socket.on('close', onEnd)
}

/** Whether `spec`'s argv[0] is a sandbox's wrapper (bwrap, sandbox-exec) rather than the command. */
function confinedWrapper(spec: SubprocessSpawnSpec): boolean {
  const backend = spec.confinement?.backend
  return backend === 'bubblewrap' || backend === 'seatbelt'
}

/** A live process tree; see SubprocessHandle for the contract of each member. */
export class ManagedProcess implements SubprocessHandle {
  readonly pid: number
  readonly stdin: Socket | undefined
  readonly stdout: Socket | undefined
  readonly stderr: Socket | undefined
  readonly collected: SubprocessCollectedOutputs
  readonly done: Promise<SubprocessOutcome>
  readonly kind: LaunchKind

  private readonly child: Child | undefined
  private readonly command: string | undefined
  private readonly graceMs: number
  private readonly onTreeGone: (process: ManagedProcess) => void
  private readonly leaderExit: Promise<ChildExit | undefined>
  private treeGone = false
  private escalating = false
  private killTimer: NodeJS.Timeout | undefined
  private readonly abortListener: (() => void) | undefined
  /** wrapped: the supervisor inside the wrapper, once the wrapper names it; signals wait for it. */
  private inner: PinnedProcess | undefined
  private readonly pendingSignals: number[] = []
  private readonly spawner: ChildSpawner
  private readonly mustNotAppear: readonly string[]
  private readonly mustStay: ReadonlyArray<{ path: string; target: string }>
  private refused: string[] | undefined

  constructor(init: ManagedProcessInit) {
    const { spec } = init
    this.kind = init.kind
    this.command = spec.argv[0]
    this.graceMs = spec.graceMs
    this.onTreeGone = init.onTreeGone
    this.spawner = init.spawner ?? NATIVE_SPAWNER
    this.mustNotAppear = spec.confinement?.mustNotAppear ?? []
    this.mustStay = spec.confinement?.mustStay ?? []
    const confined = spec.confinement !== undefined
    const wiring = {
      stdout: wiringOf(spec.stdio.stdout, 1, confined),
      stderr: wiringOf(spec.stdio.stderr, 2, confined),
    }
    const collectors: { stdout?: OutputCollector; stderr?: OutputCollector } = {}
    for (const stream of ['stdout', 'stderr'] as const) {
      const mode = spec.stdio[stream]
      if (isCollect(mode))
        collectors[stream] = new OutputCollector({ ...mode, stream, spillDir: spillDirOf(mode, init.spillDir) })
    }
    this.collected = collectors

    // Collect-mode streams are read into one recycled buffer and copied into the collector
    // (no allocation per chunk); a streaming callback gets its own copy.
    const onOutput = spec.onOutput
    const readerFor = (stream: 'stdout' | 'stderr'): ChildReader | undefined => {
      const collector = collectors[stream]
      if (collector === undefined) return undefined
      return onOutput
        ? (buf, n) => {
            collector.pushCopy(buf, 0, n)
            onOutput(Buffer.from(buf.subarray(0, n)), stream)
          }
        : (buf, n) => collector.pushCopy(buf, 0, n)
    }
    const readers = { stdout: readerFor('stdout'), stderr: readerFor('stderr') }

    let child: Child | undefined
    let failure: unknown
    try {
      child = this.start(init, wiring, readers)
    } catch (error) {
      failure = error
    }
    this.child = child
    if (child === undefined) {
      this.pid = -1
      this.stdin = this.stdout = this.stderr = undefined
      this.treeGone = true
      for (const c of Object.values(collectors)) c.finish()
      this.leaderExit = Promise.resolve(undefined)
      this.done = Promise.reject(isSpawnError(failure) ? failure : new Error(String(failure), { cause: failure }))
      this.done.catch(() => {}) // the caller may never look; a failed spawn is not a crash
      queueMicrotask(() => this.onTreeGone(this))
      return
    }

    this.pid = child.pid
    // stdin: raw for 'pipe'; for { data } write it all and close, ignoring EPIPE from a child
    // that exits without reading.
    const stdinSocket = child.stdin
    stdinSocket?.on('error', () => {})
    if (typeof spec.stdio.stdin === 'object') stdinSocket?.end(spec.stdio.stdin.data)
    this.stdin = spec.stdio.stdin === 'pipe' ? stdinSocket : undefined
    const drained: OutputPipe[] = []
    for (const stream of ['stdout', 'stderr'] as const) {
      const pipe = child[stream]
      if (!pipe) continue
      if (wiring[stream] === 'collect') {
        // Data arrives through the reader given at start (no 'data' events).
        pipe.on('error', () => {})
        drained.push(pipe)
      } else if (wiring[stream] === 'relay') {
        pipe.on('error', () => {})
        asSocket(pipe)?.pipe(stream === 'stdout' ? process.stdout : process.stderr, { end: false })
        drained.push(pipe)
      }
    }
    // Only a collected stream has a reader: the others are sockets.
    this.stdout = wiring.stdout === 'pipe' ? asSocket(child.stdout) : undefined
    this.stderr = wiring.stderr === 'pipe' ? asSocket(child.stderr) : undefined

    if (this.kind === 'direct') {
      this.leaderExit = child.exit
    } else {
      const treeExit = child.exit.then((exit) => {
        this.markTreeGone()
        return exit
      })
      this.leaderExit = this.supervisedExit(child, treeExit, collectors.stderr)
      if (this.kind === 'wrapped') this.watchInnerSupervisor(child.extras[1])
    }

    this.done = this.leaderExit.then(async (exit) => {
      if (exit === undefined) throw new Error('unreachable: leader exit without facts')
      // Descendants may still hold the pipes: wait at most graceMs for them, then stop reading.
      await Promise.all(drained.map((s) => closedWithin(s, this.graceMs)))
      for (const s of drained) s.destroy()
      for (const c of Object.values(collectors)) c.finish()
      if (this.kind === 'direct' && !groupAlive(this.pid)) this.markTreeGone()
      return exit
    })
    this.done.catch(() => {})

    if (spec.signal) {
      const listener = () => this.terminate()
      this.abortListener = listener
      spec.signal.addEventListener('abort', listener, { once: true })
    }
  }

  /** Starts the child the way its kind needs; throws SpawnError before anything ran. */
  private start(
    init: ManagedProcessInit,
    wiring: Record<'stdout' | 'stderr', OutputWiring>,
    readers: { stdout?: ChildReader | undefined; stderr?: ChildReader | undefined },
  ): Child {
    const { spec } = init
    const stdinSlot: SlotValue = spec.stdio.stdin === 'ignore' ? Slot.Null : Slot.Pipe
    const slotOf = (w: OutputWiring): SlotValue => (w === 'inherit' ? Slot.Inherit : Slot.Pipe)
    if (this.kind === 'launched' && this.spawner.launch) {
      return this.spawner.launch({
        argv: spec.argv,
        env: init.env,
        cwd: spec.cwd,
        stdio: [stdinSlot, slotOf(wiring.stdout), slotOf(wiring.stderr)],
        graceMs: spec.graceMs,
        background: spec.supervise === true,
        landlock: spec.confinement?.backend === 'landlock',
        onread: readers,
      })
    }
    if (this.kind === 'launched') return this.launchRun(init, wiring, readers)
    const extra: SlotValue[] = []
    if (this.kind === 'wrapped') {
      const rulesetFd = openRuleset(spec.confinement?.wrapper?.ruleset)
      extra.push(Slot.Pipe, Slot.Pipe)
      if (rulesetFd !== undefined) extra.push(rulesetFd)
    }
    try {
      return this.spawner.startChild(
        {
          argv: spec.argv,
          env: init.env,
          cwd: spec.cwd,
          stdio: [stdinSlot, slotOf(wiring.stdout), slotOf(wiring.stderr)],
          extra,
          confinement: nativePlanOf(spec.confinement?.steps),
          onread: readers,
        },
        this.kind,
      )
    } catch (error) {
      // The wrapper (bwrap, sandbox-exec) itself could not be exec'd: the sandbox's runner is missing.
      if (confinedWrapper(spec) && isSpawnError(error) && error.stage === 'exec') {
        throw new SpawnError({
          stage: 'launcher',
          errno: error.errno,
          path: error.path,
          detail: `the sandbox wrapper ${error.path ?? spec.argv[0]} could not be started (${error.code})`,
          cause: error,
        })
      }
      throw error
    }
  }

  /**
   * A `launched` run: the host makes every pipe, hands the launcher the child ends, and wires its
   * own ends while the supervisor starts the command (the two overlap on two cores).
   */
  private launchRun(
    init: ManagedProcessInit,
    wiring: Record<'stdout' | 'stderr', OutputWiring>,
    readers: { stdout?: ChildReader | undefined; stderr?: ChildReader | undefined },
  ): Child {
    const { spec } = init
    const native = loadNative()
    const c = spec.confinement
    const steps = c?.steps
    const rulesetFd = openRuleset(steps?.ruleset)
    if (rulesetFd !== undefined) assertOpen(rulesetFd)
    // One native call makes every pipe: status, then stdin, stdout and stderr where wanted.
    const wanted =
      1 +
      (spec.stdio.stdin === 'ignore' ? 0 : 1) +
      (wiring.stdout === 'inherit' ? 0 : 1) +
      (wiring.stderr === 'inherit' ? 0 : 1)
    const made = native.pipes(wanted)
    if (typeof made === 'number') throw new SpawnError({ stage: 'pipe', errno: -made })
    let at = 0
    const pipe = (): [number, number] => {
      const p: [number, number] = [made[at]!, made[at + 1]!]
      at += 2
      return p
    }
    const status = pipe()
    const stdin = spec.stdio.stdin === 'ignore' ? undefined : pipe()
    const out = wiring.stdout === 'inherit' ? undefined : pipe()
    const err = wiring.stderr === 'inherit' ? undefined : pipe()
    // Sent: the status write end, then stdin's read end, stdout's and stderr's write ends (or the
    // host's own fds 1 and 2 to inherit), then the ruleset.
    const fds = [status[1], ...(stdin ? [stdin[0]] : []), out ? out[1] : 1, err ? err[1] : 2]
    if (rulesetFd !== undefined) fds.push(rulesetFd)
    let sockets: Pick<Child, 'stdin' | 'stdout' | 'stderr' | 'extras'> | undefined
    try {
      const run = launch(
        {
          path: programOf(spec.argv, init.env),
          argv: spec.argv,
          env: init.env,
          cwd: spec.cwd,
          stdio: [stdin ? 'fd' : 'null', 'fd', 'fd'],
          background: spec.supervise === true,
          graceMs: spec.graceMs,
          confinement:
            steps === undefined
              ? undefined
              : {
                  dropCaps: steps.dropCaps,
                  dropBounding: steps.dropBounding,
                  capLast: steps.capLast,
                  noNewPrivs: steps.noNewPrivs,
                  ruleset: rulesetFd !== undefined,
                  landlockFlags: steps.landlockFlags ?? 0,
                  filter: steps.filter,
                  credentials: steps.credentials,
                  rlimits: steps.rlimits ?? [],
                  unshareIpc: c?.namespaces?.ipc === true,
                  unshareNet: c?.namespaces?.net === true,
                  unshareUser: c?.namespaces?.user === true,
                  maskKeys: c?.namespaces?.keys === true,
                },
        },
        fds,
        () => {
          // The launcher holds its copies now: ours of the child ends go, the host ends get wired.
          native.closeFd(status[1])
          if (stdin) native.closeFd(stdin[0])
          if (out) native.closeFd(out[1])
          if (err) native.closeFd(err[1])
          sockets = {
            stdin: stdin && socketFor(stdin[1], false),
            stdout: out && outputPipe(out[0], readers.stdout),
            stderr: err && outputPipe(err[0], readers.stderr),
            extras: [],
          }
        },
      )
      if (!sockets) throw new Error('unreachable: the launcher answered before the request left')
      // The status pipe is read natively (two short lines do not need a net.Socket).
      const statusFd = status[0]
      return {
        ...childOf(run.supervisorPid, run.pidfd, false, sockets),
        statusLines: (onLine, onEnd) => nativeLines(statusFd, onLine, onEnd),
      }
    } catch (error) {
      if (sockets) {
        for (const socket of [sockets.stdin, sockets.stdout, sockets.stderr]) socket?.destroy()
        native.closeFd(status[0])
      } else {
        for (const fd of made) native.closeFd(fd)
      }
      throw error
    }
  }

  /**
   * The command's exit as its supervisor reports it. A supervisor that ends without a report
   * lost its command to an outside SIGKILL; a wrapper that never said "started" refused to build
   * the sandbox (its first stderr line says why): the command never ran.
   */
  private supervisedExit(
    child: Child,
    treeExit: Promise<ChildExit>,
    stderr: OutputCollector | undefined,
  ): Promise<ChildExit | undefined> {
    return new Promise((resolve, reject) => {
      // The native launcher answers once the command exec'd; a supervisor the host started itself says "started".
      let started = this.kind === 'launched' && this.spawner.launch === undefined
      let settled = false
      const settle = (exit: ChildExit | SpawnError) => {
        if (settled) return
        settled = true
        if (exit instanceof SpawnError) reject(exit)
        else resolve(exit)
      }
      const lines = child.statusLines ?? ((onLine, onEnd) => readLines(child.extras[0], onLine, onEnd))
      lines(
        (line) => {
          const status = parseStatusLine(line)
          if (status?.kind === 'started') started = true
          if (status?.kind === 'exit') settle(status.exit)
          if (status?.kind === 'error') {
            const path = status.stage === 'exec' ? this.command : undefined
            settle(new SpawnError({ stage: status.stage as SpawnStage, errno: status.errno, path }))
          }
        },
        () => {
          void treeExit.then(async (exit) => {
            if (started) return settle({ exitCode: null, signal: exit.signal ?? 'SIGKILL' })
            // Give the wrapper's stderr a moment to land, then quote its own line.
            await sleep(0)
            const said = stderr
              ?.readFrom(0)
              .text.split('\n')
              .find((l) => l.trim() !== '')
            settle(
              new SpawnError({
                stage: 'launcher',
                errno: 0,
                detail: said ?? `the sandbox wrapper exited ${exit.exitCode ?? exit.signal} before the command started`,
              }),
            )
          })
        },
      )
    })
  }

  /** wrapped: learns the supervisor's pid from bwrap's JSON status and pins it with a pidfd. */
  private watchInnerSupervisor(json: Socket | undefined): void {
    readLines(
      json,
      (line) => {
        const match = /"child-pid"\s*:\s*(\d+)/.exec(line)
        if (!match || this.inner !== undefined || this.treeGone) return
        const inner = this.spawner.pin(Number(match[1]))
        if (inner === undefined) return
        this.inner = inner
        for (const sig of this.pendingSignals.splice(0)) inner.signal(sig)
      },
      () => {},
    )
  }

  private markTreeGone(): void {
    if (this.treeGone) return
    this.treeGone = true
    // Only now, with nothing of the run left to recreate them.
    if (this.mustNotAppear.length > 0 || this.mustStay.length > 0)
      this.refused = [...takeAwayAppeared(this.mustNotAppear), ...restoreLinks(this.mustStay)]
    if (this.killTimer) clearTimeout(this.killTimer)
    this.killTimer = undefined
    this.inner?.release()
    this.inner = undefined
    this.onTreeGone(this)
  }

  /** Whether the tree is gone, checking /proc when the leader has exited (never kill(-pgid,0)). */
  private checkTreeGone(): boolean {
    if (this.treeGone) return true
    if (this.kind !== 'direct' || this.child === undefined || this.child.running) return false
    if (!groupAlive(this.pid)) this.markTreeGone()
    return this.treeGone
  }

  /** Signals the tree: the group (direct), or the supervisor, which forwards to every member. */
  private signalTree(signal: NodeJS.Signals): void {
    const child = this.child
    if (!child) return
    if (this.kind === 'launched') {
      child.kill(signal)
      return
    }
    if (this.kind === 'wrapped') {
      // bwrap does not forward signals: they go to the supervisor inside, once it is known.
      if (this.inner !== undefined) this.inner.signal(signalNumber(signal))
      else this.pendingSignals.push(signalNumber(signal))
      return
    }
    try {
      process.kill(-this.pid, signal)
    } catch {
      child.kill(signal) // the group is gone but the leader may not be reaped yet
    }
  }

  /** SIGTERM → graceMs → SIGKILL over the tree; idempotent; a no-op once the tree is gone. */
  terminate(): void {
    if (this.escalating || this.checkTreeGone()) return
    this.escalating = true
    this.signalTree('SIGTERM')
    const supervised = this.kind !== 'direct'
    this.killTimer = setTimeout(
      () => {
        this.killTimer = undefined
        if (this.checkTreeGone()) return
        if (supervised) {
          // The supervisor kills at its own grace; reaching here means it is stuck: last resort.
          this.signalTree('SIGKILL')
          this.child?.kill('SIGKILL')
          return
        }
        this.signalTree('SIGKILL')
      },
      supervised ? this.graceMs + 2000 : this.graceMs,
    )
  }

  /** SIGKILL to the whole tree at once (host exit, disposal after failure). */
  forceKill(): void {
    if (this.treeGone || !this.child) return
    if (this.kind === 'launched') {
      // The launcher's death (with the host) takes every supervisor and its tree down; while the
      // host lives on, ask the supervisor (TERM escalates at its grace).
      this.child.kill('SIGTERM')
      return
    }
    if (this.kind === 'wrapped') {
      this.signalTree('SIGKILL')
      this.child.kill('SIGKILL') // bwrap's death takes the sandbox with it (--die-with-parent)
      return
    }
    try {
      process.kill(-this.pid, 'SIGKILL')
    } catch {
      this.child.kill('SIGKILL')
    }
  }

  /** The `mustNotAppear` paths the run had created, moved aside once its tree was gone. */
  get refusedPaths(): readonly string[] | undefined {
    return this.refused
  }

  /** Resolves true once the whole tree has exited; false when `signal` aborts first. */
  async waitForExit(signal?: AbortSignal): Promise<boolean> {
    if (this.treeGone) return true
    if (signal?.aborted) return false
    let aborted = false
    const onAbort = new Promise<void>((resolve) => {
      if (!signal) return
      signal.addEventListener(
        'abort',
        () => {
          aborted = true
          resolve()
        },
        { once: true },
      )
    })
    const exited = this.kind === 'direct' ? this.leaderExit.catch(() => undefined) : this.child?.exit
    await Promise.race([exited, onAbort])
    // Leader gone; descendants of an unsupervised group are only visible in /proc.
    let delay = 2
    while (!aborted && !this.checkTreeGone()) {
      await Promise.race([sleep(delay), onAbort])
      delay = Math.min(delay * 2, 50)
    }
    return this.treeGone
  }

  /** Stops listening to the spec's abort signal (the tree no longer needs it). */
  detach(signal: AbortSignal | undefined): void {
    if (signal && this.abortListener) signal.removeEventListener('abort', this.abortListener)
  }

  /** Whether the tree is known to be gone. */
  get gone(): boolean {
    return this.treeGone
  }
}

/** Where a stream's spill file goes: the spec's own directory (a sandbox session's), else the runtime's. */
function spillDirOf(mode: SubprocessCollect, fallback: () => string): () => string {
  const dir = mode.spill?.dir
  return dir === undefined ? fallback : () => dir
}
