/**
 * How a run's stdio is wired, the same for every launch kind: each output stream is handed to
 * the caller as a socket (`pipe`), inherited from the host, relayed through a pipe (a confined
 * command never holds the host's own file), or collected within bounds; stdin is ignored,
 * handed out, or fed once and closed.
 */
import { fstatSync, statSync } from 'node:fs'
import type { Socket } from 'node:net'
import { OutputCollector } from '../collect.js'
import { tty } from '../lazy-builtins.js'
import { NativePipe } from '../output/native-pipe.js'
import { Slot, type SlotValue } from '../native.js'
import type { SubprocessCollect, SubprocessOutputMode, SubprocessSpawnSpec } from '../types.js'
import type { Child, ChildReader, OutputPipe } from './child.js'

/** One of the two output streams. */
export type OutputStream = 'stdout' | 'stderr'

/** How the host's own stdout/stderr is handed to a child: directly, or relayed through a pipe. */
export type OutputWiring = 'pipe' | 'inherit' | 'relay' | 'collect'

/** The output side of a run, decided before it starts. */
export interface OutputPlan {
  wiring: Record<OutputStream, OutputWiring>
  collectors: { stdout?: OutputCollector; stderr?: OutputCollector }
  /** The reused-buffer readers of the collected streams (read natively, no 'data' events). */
  readers: { stdout?: ChildReader | undefined; stderr?: ChildReader | undefined }
}

/** The host ends of a started run's stdio, as the handle exposes them. */
export interface AttachedStdio {
  stdin: Socket | undefined
  stdout: Socket | undefined
  stderr: Socket | undefined
  /** The collected and relayed pipes, to drain once the command exits. */
  drained: OutputPipe[]
}

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

/** Where a stream's spill file goes: the spec's own directory (a sandbox session's), else the runtime's. */
function spillDirOf(mode: SubprocessCollect, fallback: () => string): () => string {
  const dir = mode.spill?.dir
  return dir === undefined ? fallback : () => dir
}

/** The wiring, collectors and readers of `spec`'s output; `spillDir` makes the runtime's spill directory. */
export function planOutput(spec: SubprocessSpawnSpec, spillDir: () => string): OutputPlan {
  const confined = spec.confinement !== undefined
  const wiring = {
    stdout: wiringOf(spec.stdio.stdout, 1, confined),
    stderr: wiringOf(spec.stdio.stderr, 2, confined),
  }
  const collectors: OutputPlan['collectors'] = {}
  for (const stream of ['stdout', 'stderr'] as const) {
    const mode = spec.stdio[stream]
    if (isCollect(mode))
      collectors[stream] = new OutputCollector({ ...mode, stream, spillDir: spillDirOf(mode, spillDir) })
  }
  // Collect-mode streams are read into one recycled buffer and copied into the collector
  // (no allocation per chunk); a streaming callback gets its own copy.
  const onOutput = spec.onOutput
  const readerFor = (stream: OutputStream): ChildReader | undefined => {
    const collector = collectors[stream]
    if (collector === undefined) return undefined
    return onOutput
      ? (buf, n) => {
          collector.pushCopy(buf, 0, n)
          onOutput(Buffer.from(buf.subarray(0, n)), stream)
        }
      : (buf, n) => collector.pushCopy(buf, 0, n)
  }
  return { wiring, collectors, readers: { stdout: readerFor('stdout'), stderr: readerFor('stderr') } }
}

/** The child's fds 0..2 as a native spawn takes them. */
export function stdioSlots(spec: SubprocessSpawnSpec, wiring: OutputPlan['wiring']): [SlotValue, SlotValue, SlotValue] {
  const slotOf = (w: OutputWiring): SlotValue => (w === 'inherit' ? Slot.Inherit : Slot.Pipe)
  return [spec.stdio.stdin === 'ignore' ? Slot.Null : Slot.Pipe, slotOf(wiring.stdout), slotOf(wiring.stderr)]
}

/** The socket a pipe without a reader is (a NativePipe here is a wiring mistake). */
function asSocket(pipe: OutputPipe | undefined): Socket | undefined {
  if (pipe instanceof NativePipe) throw new Error('unreachable: a stream read natively was asked for as a socket')
  return pipe
}

/** Takes the host ends of `child`'s stdio: feeds stdin, starts relays, and names what the handle exposes. */
export function attachStdio(child: Child, spec: SubprocessSpawnSpec, wiring: OutputPlan['wiring']): AttachedStdio {
  // stdin: raw for 'pipe'; for { data } write it all and close, ignoring EPIPE from a child
  // that exits without reading.
  const stdinSocket = child.stdin
  stdinSocket?.on('error', () => {})
  if (typeof spec.stdio.stdin === 'object') stdinSocket?.end(spec.stdio.stdin.data)
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
  return {
    stdin: spec.stdio.stdin === 'pipe' ? stdinSocket : undefined,
    // Only a collected stream has a reader: the others are sockets.
    stdout: wiring.stdout === 'pipe' ? asSocket(child.stdout) : undefined,
    stderr: wiring.stderr === 'pipe' ? asSocket(child.stderr) : undefined,
    drained,
  }
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

/** Descendants may still hold the pipes: waits at most `ms` for them to close, then stops reading. */
export async function drainPipes(pipes: readonly OutputPipe[], ms: number): Promise<void> {
  await Promise.all(pipes.map((s) => closedWithin(s, ms)))
  // Bytes written before the command exited are still handed over when a descendant holds the pipe.
  for (const s of pipes) s instanceof NativePipe ? s.finishReading() : s.destroy()
}
