/**
 * The supervisor's status line, as the host reads it: `started PID`, `error STAGE ERRNO`, then
 * `exit N` or `signal N` (native/launch.cc and native/supervisor.cc write exactly these). Every
 * supervised run reports this way, whether the launcher forked its supervisor or `cordon-exec
 * init` runs inside a wrapper, so the host learns the command's exit, not the supervisor's.
 */
import type { Socket } from 'node:net'
import { SpawnError, type SpawnStage } from '../../policy/errors.js'
import type { OutputCollector } from '../collect.js'
import { loadNative } from '../native.js'
import { type Child, type ChildExit, signalName } from '../process/child.js'

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

/** Splits `text` into complete lines for `onLine`; returns what is left after the last newline. */
function splitLines(text: string, onLine: (line: string) => void): string {
  let rest = text
  for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
    onLine(rest.slice(0, nl))
    rest = rest.slice(nl + 1)
  }
  return rest
}

/** Calls `onLine` for each complete line the fd carries (read natively), then `onEnd` at EOF. */
export function nativeLines(fd: number, onLine: (line: string) => void, onEnd: () => void): void {
  let text = ''
  const buffer = Buffer.allocUnsafe(512)
  loadNative().readPipe(fd, buffer, (n) => {
    if (n <= 0) return onEnd()
    text = splitLines(text + buffer.toString('latin1', 0, n), onLine)
  })
}

/** Calls `onLine` for each complete line the socket carries, then `onEnd` once it closes. */
export function readLines(socket: Socket | undefined, onLine: (line: string) => void, onEnd: () => void): void {
  if (!socket) {
    onEnd()
    return
  }
  let text = ''
  socket.on('data', (chunk: Buffer) => {
    text = splitLines(text + chunk.toString('latin1'), onLine)
  })
  socket.on('error', () => {})
  socket.on('close', onEnd)
}

/** What {@link supervisedExit} needs to know beyond the child. */
export interface SupervisedExitOptions {
  /** The supervisor's exit: the tree is gone once it resolves. */
  treeExit: Promise<ChildExit>
  /** The run's collected stderr, where a wrapper says why it refused to start. */
  stderr: OutputCollector | undefined
  /** Whether the command is known to have started already (the native launcher answers after its exec). */
  started: boolean
  /** The program named by an `exec` failure. */
  command: string | undefined
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The wrapper's own first line on stderr, or what its exit says when it wrote none. */
async function wrapperRefusal(exit: ChildExit, stderr: OutputCollector | undefined): Promise<SpawnError> {
  // Give the wrapper's stderr a moment to land, then quote its own line.
  await sleep(0)
  const said = stderr
    ?.readFrom(0)
    .text.split('\n')
    .find((l) => l.trim() !== '')
  return new SpawnError({
    stage: 'launcher',
    errno: 0,
    detail: said ?? `the sandbox wrapper exited ${exit.exitCode ?? exit.signal} before the command started`,
  })
}

/**
 * The command's exit as its supervisor reports it. A supervisor that ends without a report
 * lost its command to an outside SIGKILL; a wrapper that never said "started" refused to build
 * the sandbox (its first stderr line says why): the command never ran.
 */
export function supervisedExit(child: Child, options: SupervisedExitOptions): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    let started = options.started
    let settled = false
    const settle = (exit: ChildExit | SpawnError) => {
      if (settled) return
      settled = true
      if (exit instanceof SpawnError) reject(exit)
      else resolve(exit)
    }
    const onLine = (line: string) => {
      const status = parseStatusLine(line)
      if (status?.kind === 'started') started = true
      if (status?.kind === 'exit') settle(status.exit)
      if (status?.kind === 'error') {
        const path = status.stage === 'exec' ? options.command : undefined
        settle(new SpawnError({ stage: status.stage as SpawnStage, errno: status.errno, path }))
      }
    }
    const onEnd = () => {
      void options.treeExit.then(async (exit) => {
        settle(
          started ? { exitCode: null, signal: exit.signal ?? 'SIGKILL' } : await wrapperRefusal(exit, options.stderr),
        )
      })
    }
    const lines = child.statusLines ?? ((onL, onE) => readLines(child.extras[0], onL, onE))
    lines(onLine, onEnd)
  })
}
