/**
 * The spawn primitive as TypeScript sees it: one native child (its own session), its pipes as
 * Node sockets, and its exit observed through a pidfd on the event loop. No defaults, no
 * collection, no tree policy: the runtime above owns those.
 */
import type { Socket } from 'node:net'
import { constants as osConstants } from 'node:os'
import { SpawnError, type SpawnStage } from '../../policy/errors.js'
import { net } from '../lazy-builtins.js'
import { loadNative, type NativeConfinementPlan, Slot, type SlotValue } from '../native.js'
import { NativePipe, type PipeReader } from '../output/native-pipe.js'
import { findProgram, pathOf } from '../program-path.js'

/** Exit facts of the leader process in Node's `close`-event vocabulary. */
export interface ChildExit {
  exitCode: number | null
  signal: NodeJS.Signals | null
}

/** What to start: argv[0] is searched in the child's PATH when it has no slash. */
export interface ChildOptions {
  argv: readonly string[]
  /** Complete child environment as `K=V` strings (the caller merged and scrubbed it). */
  env: readonly string[]
  cwd?: string | undefined
  stdio: readonly [SlotValue, SlotValue, SlotValue]
  /** Child fds 3, 4, …: `Slot.Pipe` (a pipe the child writes, read end in `Child.extras`) or a host fd. */
  extra?: readonly SlotValue[] | undefined
  confinement?: NativeConfinementPlan | undefined
  /**
   * Reused-buffer readers for stdout/stderr: the named stream is read natively (a NativePipe,
   * not a socket), each read landing in one recycled buffer handed to the callback as
   * `(buf, n)` (bytes `[0, n)` are valid only during the call: copy what you keep). The pipe
   * emits no 'data' events; 'end', 'close' and 'error' fire as a socket's would.
   */
  onread?: { stdout?: ChildReader | undefined; stderr?: ChildReader | undefined } | undefined
}

/** Receives bytes `[0, n)` of `buf`, a buffer reused for the next read: copy what you keep. */
export type ChildReader = PipeReader

/** A child's output pipe as the host holds it: a socket, or read natively when it has a reader. */
export type OutputPipe = Socket | NativePipe

/** A started child; the host ends of its pipes are sockets (or native readers) the caller owns. */
export interface Child {
  readonly pid: number
  readonly stdin: Socket | undefined
  readonly stdout: OutputPipe | undefined
  readonly stderr: OutputPipe | undefined
  /** Read ends of the extra pipes (fd 3, 4, …), undefined where the slot was not a pipe. */
  readonly extras: readonly (Socket | undefined)[]
  /** Hands a network allow-list's listener fd over once the run's supervisor made it (launched and wrapped runs). */
  readonly proxyListener?: ((take: (fd: number) => void) => void) | undefined
  /** A launched run's supervisor status, line by line (read natively), then the end. */
  readonly statusLines?: ((onLine: (line: string) => void, onEnd: () => void) => void) | undefined
  /** Settles once the leader has exited (and, for our own child, been reaped); never rejects. */
  readonly exit: Promise<ChildExit>
  /** True until the leader has exited (after that its pid may name another process). */
  readonly running: boolean
  /** Signals the leader through its pidfd (never a reused pid); false once it is gone. */
  kill(signal: NodeJS.Signals | number): boolean
}

const SIGNAL_NAMES: ReadonlyMap<number, NodeJS.Signals> = new Map(
  Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
)

/** The name of signal `n` (`15` → `'SIGTERM'`). */
export function signalName(n: number): NodeJS.Signals {
  return SIGNAL_NAMES.get(n) ?? (`SIG${n}` as NodeJS.Signals)
}

/** The number of a signal given by name or number. */
export function signalNumber(signal: NodeJS.Signals | number): number {
  if (typeof signal === 'number') return signal
  const n = osConstants.signals[signal]
  if (n === undefined) throw new TypeError(`unknown signal ${signal}`)
  return n
}

/**
 * The one read buffer every reused-buffer reader shares. Safe to share: each read lands in it
 * and its reader is called synchronously before the loop performs any other read, and readers
 * must not keep a reference to it.
 */
let sharedReadBuffer: Buffer | undefined
const READ_BUFFER_BYTES = 64 * 1024

/** A Node socket over a host fd: readable for pipes the child writes, writable for its stdin. */
export function socketFor(fd: number | null | undefined, readable: boolean): Socket | undefined {
  if (fd === null || fd === undefined) return undefined
  return new (net().Socket)({ fd, readable, writable: !readable })
}

/** The host end of an output pipe: read natively into the shared buffer when it has a reader, else a socket. */
export function outputPipe(fd: number | null | undefined, reader?: ChildReader): OutputPipe | undefined {
  if (fd === null || fd === undefined) return undefined
  if (reader === undefined) return socketFor(fd, true)
  sharedReadBuffer ??= Buffer.allocUnsafeSlow(READ_BUFFER_BYTES)
  return new NativePipe(fd, sharedReadBuffer, reader)
}

/** The absolute program for `argv[0]` on the child's PATH, or a SpawnError at `exec`. */
export function programOf(argv: readonly string[], env: readonly string[]): string {
  const file = argv[0] ?? ''
  const found = findProgram(file, pathOf(env))
  if ('error' in found) throw new SpawnError({ stage: 'exec', errno: osConstants.errno[found.error], path: file })
  return found.path
}

/** A Child over a pidfd the caller owns: watched (reaped when `reap`), signalled through it. */
export function childOf(
  pid: number,
  pidfd: number,
  reap: boolean,
  sockets: Pick<Child, 'stdin' | 'stdout' | 'stderr' | 'extras'>,
): Child {
  const native = loadNative()
  let running = true
  const exit = new Promise<ChildExit>((resolve) => {
    native.watch(pidfd, reap, true, (exitCode, signal) => {
      running = false
      resolve({ exitCode, signal: signal === null ? null : signalName(signal) })
    })
  })
  return {
    pid,
    ...sockets,
    exit,
    get running() {
      return running
    },
    kill(signal) {
      // The watch owns (and closes) the pidfd only after the exit callback, so it is valid here.
      if (!running) return false
      return native.pidfdSignal(pidfd, signalNumber(signal)) === 0
    },
  }
}

/** Starts a child, or throws SpawnError with the stage and errno that failed before exec. */
export function startChild(options: ChildOptions): Child {
  const native = loadNative()
  const program = programOf(options.argv, options.env)
  const slots: SlotValue[] = [...options.stdio, ...(options.extra ?? [])]
  const result = native.spawn(
    program,
    options.argv,
    options.env,
    options.cwd ?? null,
    slots,
    options.confinement ?? null,
  )
  if (!('pid' in result)) {
    const path = result.stage === 'chdir' ? options.cwd : result.stage === 'exec' ? program : undefined
    throw new SpawnError({ stage: result.stage as SpawnStage, errno: result.errno, path })
  }
  const { pid, pidfd, fds } = result
  return childOf(pid, pidfd, true, {
    stdin: socketFor(fds[0], false),
    stdout: outputPipe(fds[1], options.onread?.stdout),
    stderr: outputPipe(fds[2], options.onread?.stderr),
    extras: (options.extra ?? []).map((slot, i) => (slot === Slot.Pipe ? socketFor(fds[3 + i], true) : undefined)),
  })
}

/** A SpawnError for `errno` at `stage` (a stage name the native side reported). */
export function spawnFailure(stage: string, errno: number, path?: string, detail?: string): SpawnError {
  return new SpawnError({
    stage: stage as SpawnStage,
    errno,
    path,
    detail,
  })
}
