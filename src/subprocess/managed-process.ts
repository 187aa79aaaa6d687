/**
 * One spawned process tree behind the seed's SubprocessHandle: wiring of its streams, bounded
 * collection, the exit facts, tree-scoped termination and the wait for the whole tree.
 *
 * The tree is the child's process group (every child leads its own session), or, with
 * `supervise`, everything below `cordon-exec --supervise`, whose own exit means "tree gone".
 */
import type { Socket } from 'node:net'
import { isSpawnError, SpawnError } from '../policy/errors.js'
import { signalName, startChild, type Child, type ChildExit, type ChildReader } from './child.js'
import { OutputCollector } from './collect.js'
import { StdioKind } from './native.js'
import { groupAlive } from './process-group.js'
import type {
  SubprocessCollect,
  SubprocessCollectedOutputs,
  SubprocessHandle,
  SubprocessOutcome,
  SubprocessOutputMode,
  SubprocessSpawnSpec,
} from './types.js'

/** Everything a ManagedProcess needs beyond the spec (the runtime prepares it). */
export interface ManagedProcessInit {
  spec: SubprocessSpawnSpec
  /** The complete child environment, `K=V`. */
  env: string[]
  /** Lazily creates the private spill directory. */
  spillDir: () => string
  /** `cordon-exec` path, required when `spec.supervise`. */
  helper: string | undefined
  /** Called once the tree is known to be gone (the runtime drops the handle). */
  onTreeGone: (process: ManagedProcess) => void
}

const outputKind = (mode: SubprocessOutputMode): StdioKind => (mode === 'inherit' ? StdioKind.Inherit : StdioKind.Pipe)

const isCollect = (mode: SubprocessOutputMode): mode is SubprocessCollect => typeof mode === 'object'

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Resolves when `socket` closes or `ms` passes, whichever is first (true when it closed). */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.closed) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

/** Parses the supervisor's one status line (`exit N`, `signal N`, `error exec E`). */
function parseStatusLine(line: string): ChildExit | { error: number } | undefined {
  const [word, a, b] = line.trim().split(' ')
  if (word === 'exit') return { exitCode: Number(a), signal: null }
  if (word === 'signal') return { exitCode: null, signal: signalName(Number(a)) }
  if (word === 'error' && a === 'exec') return { error: Number(b) }
  return undefined
}

/** A live process tree; see SubprocessHandle for the contract of each member. */
export class ManagedProcess implements SubprocessHandle {
  readonly pid: number
  readonly stdin: Socket | undefined
  readonly stdout: Socket | undefined
  readonly stderr: Socket | undefined
  readonly collected: SubprocessCollectedOutputs
  readonly done: Promise<SubprocessOutcome>
  readonly supervised: boolean

  private readonly child: Child | undefined
  private readonly command: string | undefined
  private readonly graceMs: number
  private readonly onTreeGone: (process: ManagedProcess) => void
  private readonly leaderExit: Promise<ChildExit | undefined>
  private treeGone = false
  private escalating = false
  private killTimer: NodeJS.Timeout | undefined
  private readonly abortListener: (() => void) | undefined

  constructor(init: ManagedProcessInit) {
    const { spec } = init
    this.graceMs = spec.graceMs
    this.onTreeGone = init.onTreeGone
    this.supervised = spec.supervise === true
    this.command = spec.argv[0]
    const argv = this.supervised
      ? [
          init.helper ?? 'cordon-exec',
          '--supervise',
          '--status-fd',
          '3',
          '--grace-ms',
          String(Math.ceil(spec.graceMs)),
          '--host-pid',
          String(process.pid),
          '--',
          ...spec.argv,
        ]
      : spec.argv
    const stdinKind = spec.stdio.stdin === 'ignore' ? StdioKind.Null : StdioKind.Pipe
    const collectors: { stdout?: OutputCollector; stderr?: OutputCollector } = {}
    for (const stream of ['stdout', 'stderr'] as const) {
      const mode = spec.stdio[stream]
      if (isCollect(mode)) collectors[stream] = new OutputCollector({ ...mode, stream, spillDir: init.spillDir })
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

    let child: Child | undefined
    let failure: unknown
    try {
      child = startChild({
        argv,
        env: init.env,
        cwd: spec.cwd,
        stdio: [stdinKind, outputKind(spec.stdio.stdout), outputKind(spec.stdio.stderr)],
        extraPipe: this.supervised,
        confinement: spec.confinement?.plan,
        onread: { stdout: readerFor('stdout'), stderr: readerFor('stderr') },
      })
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
    const drained: Socket[] = []
    for (const stream of ['stdout', 'stderr'] as const) {
      const socket = child[stream]
      const collector = collectors[stream]
      if (socket && collector) {
        // Data arrives through the reader given to startChild (no 'data' events).
        socket.on('error', () => {})
        drained.push(socket)
      }
    }
    this.stdout = spec.stdio.stdout === 'pipe' ? child.stdout : undefined
    this.stderr = spec.stdio.stderr === 'pipe' ? child.stderr : undefined

    const treeExit = child.exit.then((exit) => {
      if (this.supervised) this.markTreeGone()
      return exit
    })
    this.leaderExit = this.supervised ? this.supervisedLeaderExit(child, treeExit) : treeExit

    this.done = this.leaderExit.then(async (exit) => {
      if (exit === undefined) throw new Error('unreachable: leader exit without facts')
      // Descendants may still hold the pipes: wait at most graceMs for them, then stop reading.
      await Promise.all(drained.map((s) => closedWithin(s, this.graceMs)))
      for (const s of drained) s.destroy()
      for (const c of Object.values(collectors)) c.finish()
      if (!this.supervised && !groupAlive(this.pid)) this.markTreeGone()
      return exit
    })
    this.done.catch(() => {})

    if (spec.signal) {
      const listener = () => this.terminate()
      this.abortListener = listener
      spec.signal.addEventListener('abort', listener, { once: true })
    }
  }

  /** The command's exit as the supervisor reports it; its own exit when it could not say. */
  private supervisedLeaderExit(child: Child, treeExit: Promise<ChildExit>): Promise<ChildExit | undefined> {
    return new Promise((resolve, reject) => {
      let text = ''
      const status = child.extra
      const settleFromSupervisor = () => void treeExit.then(resolve)
      if (!status) return settleFromSupervisor()
      status.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1')
        const newline = text.indexOf('\n')
        if (newline < 0) return
        const parsed = parseStatusLine(text.slice(0, newline))
        status.destroy()
        if (parsed === undefined) return settleFromSupervisor()
        if ('error' in parsed) {
          return reject(new SpawnError({ stage: 'exec', errno: parsed.error, path: this.command }))
        }
        resolve(parsed)
      })
      status.on('error', () => {})
      status.on('close', () => {
        if (text.indexOf('\n') < 0) settleFromSupervisor()
      })
    })
  }

  private markTreeGone(): void {
    if (this.treeGone) return
    this.treeGone = true
    if (this.killTimer) clearTimeout(this.killTimer)
    this.killTimer = undefined
    this.onTreeGone(this)
  }

  /** Whether the tree is gone, checking /proc when the leader has exited (never kill(-pgid,0)). */
  private checkTreeGone(): boolean {
    if (this.treeGone) return true
    if (this.supervised || this.child === undefined || this.child.running) return false
    if (!groupAlive(this.pid)) this.markTreeGone()
    return this.treeGone
  }

  private signalTree(signal: NodeJS.Signals): void {
    const child = this.child
    if (!child) return
    if (this.supervised) {
      // The supervisor forwards TERM to every descendant and escalates to KILL after grace.
      child.kill(signal)
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
    this.killTimer = setTimeout(
      () => {
        this.killTimer = undefined
        if (this.checkTreeGone()) return
        if (this.supervised) {
          // The supervisor kills at its own grace; reaching here means it is stuck: last resort.
          this.child?.kill('SIGKILL')
          return
        }
        this.signalTree('SIGKILL')
      },
      this.supervised ? this.graceMs + 2000 : this.graceMs,
    )
  }

  /** SIGKILL to the whole tree at once (host exit, disposal after failure). */
  forceKill(): void {
    if (this.treeGone || !this.child) return
    if (this.supervised) {
      // PDEATHSIG covers host death; here the host lives on, so ask for the immediate kill.
      this.child.kill('SIGTERM')
      return
    }
    try {
      process.kill(-this.pid, 'SIGKILL')
    } catch {
      this.child.kill('SIGKILL')
    }
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
    const exited = this.supervised ? this.child!.exit : this.leaderExit.catch(() => undefined)
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
