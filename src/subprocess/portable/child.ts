/**
 * The spawn primitive of the portable path: the same `Child` as subprocess/process/child.ts (its own session, its
 * pipes as sockets, its exit as a promise), started by node:child_process where the addon is not
 * in use. What differs, and why it is still safe:
 *
 * - Failures before exec: libuv reports them as an 'error' event after spawn() returned, without
 *   the stage. So the program (on the child's PATH) and the cwd are checked here first, and a
 *   failure that still happens is told by re-checking, at `exec` or `chdir` like the native child.
 * - Pipes are socket pairs (libuv makes stdio that way): a command sees `socket:[…]` where the
 *   native child has `pipe:[…]`; reads, writes, EOF and EPIPE behave alike.
 * - The exit comes from Node's SIGCHLD reaping ('exit'), not a pidfd: `kill()` stops as soon as
 *   the leader is reaped, so a signal never reaches a reused pid through this handle.
 * - The child's signal dispositions (1..31) and mask are reset by libuv; descriptors the host did
 *   not mark close-on-exec may reach it (the native child closes every other fd).
 * - A confinement plan (`options.confinement`) is refused at `launcher`: only the native child
 *   can confine itself between clone and exec, so nothing runs unconfined in its place.
 */
import type { ChildProcess, StdioOptions } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import type { Socket } from 'node:net'
import { constants as osConstants } from 'node:os'
import { SpawnError } from '../../policy/errors.js'
import type { Child, ChildExit, ChildOptions } from '../process/child.js'
import { programOf, signalNumber } from '../process/child.js'
import { Slot, type SlotValue } from '../native.js'
import { childProcess } from '../lazy-builtins.js'

const ENOSYS = 38

/** Throws SpawnError at `chdir` when `cwd` cannot be the child's working directory. */
function checkCwd(cwd: string | undefined): void {
  if (cwd === undefined) return
  let directory: boolean
  try {
    directory = statSync(cwd).isDirectory()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'ENOENT'
    throw new SpawnError({ stage: 'chdir', errno: osConstants.errno[code as 'ENOENT'] ?? 2, path: cwd })
  }
  if (!directory) throw new SpawnError({ stage: 'chdir', errno: osConstants.errno.ENOTDIR, path: cwd })
  try {
    accessSync(cwd, constants.X_OK)
  } catch {
    throw new SpawnError({ stage: 'chdir', errno: osConstants.errno.EACCES, path: cwd })
  }
}

/** Throws SpawnError at `exec` when `program` is not an executable regular file. */
function checkProgram(program: string): void {
  let file: boolean
  try {
    file = statSync(program).isFile()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'ENOENT'
    throw new SpawnError({ stage: 'exec', errno: osConstants.errno[code as 'ENOENT'] ?? 2, path: program })
  }
  try {
    if (!file) throw new Error('not a file')
    accessSync(program, constants.X_OK)
  } catch {
    throw new SpawnError({ stage: 'exec', errno: osConstants.errno.EACCES, path: program })
  }
}

/** child_process's stdio entry for one slot of child fd `fd`. */
function stdioOf(slot: SlotValue, fd: number): 'ignore' | 'pipe' | 'inherit' | number {
  if (slot === Slot.Null) return 'ignore'
  if (slot === Slot.Pipe) return 'pipe'
  if (slot === Slot.Inherit) return fd <= 2 ? 'inherit' : fd
  return slot
}

/** A `K=V` environment array as the object child_process takes (the first entry of a name wins, as in execve's getenv). */
function envObject(env: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const entry of env) {
    const eq = entry.indexOf('=')
    if (eq <= 0) continue
    const name = entry.slice(0, eq)
    if (!(name in out)) out[name] = entry.slice(eq + 1)
  }
  return out
}

/** The Child over a started ChildProcess: its exit, its pipes (read through `onread` where given), its signals. */
function portableChildOf(child: ChildProcess, pid: number, options: ChildOptions): Child {
  let running = true
  const exit = new Promise<ChildExit>((resolve) => {
    child.once('exit', (exitCode, signal) => {
      running = false
      resolve({ exitCode, signal })
    })
  })
  child.on('error', () => {}) // a kill after the reap, or a failed pipe: the exit promise says what matters
  const readable = (fd: number, reader?: (buf: Buffer, n: number) => void): Socket | undefined => {
    const stream = child.stdio[fd] as Socket | null | undefined
    if (!stream) return undefined
    if (reader) stream.on('data', (chunk: Buffer) => reader(chunk, chunk.length))
    return stream
  }
  return {
    pid,
    stdin: (child.stdin as Socket | null) ?? undefined,
    stdout: readable(1, options.onread?.stdout),
    stderr: readable(2, options.onread?.stderr),
    extras: (options.extra ?? []).map((slot, i) => (slot === Slot.Pipe ? readable(3 + i) : undefined)),
    exit,
    get running() {
      return running
    },
    kill(signal) {
      if (!running) return false
      return child.kill(signalNumber(signal))
    },
  }
}

/** Starts a child over node:child_process, or throws SpawnError with the stage that failed before exec. */
export function startPortableChild(options: ChildOptions): Child {
  if (options.confinement !== undefined) {
    throw new SpawnError({
      stage: 'launcher',
      errno: ENOSYS,
      detail:
        'the portable spawn path cannot apply a confinement plan (only the native child confines itself before exec): nothing was run',
    })
  }
  const program = programOf(options.argv, options.env)
  checkProgram(program)
  checkCwd(options.cwd)
  const slots = [...options.stdio, ...(options.extra ?? [])]
  const stdio: StdioOptions = slots.map((slot, fd) => stdioOf(slot, fd))
  let child: ChildProcess
  try {
    child = childProcess().spawn(program, options.argv.slice(1), {
      argv0: options.argv[0] ?? program,
      cwd: options.cwd,
      env: envObject(options.env),
      stdio,
      // setsid: the child leads its own session and process group, as the native child does.
      detached: true,
    })
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).errno
    throw new SpawnError({ stage: 'exec', errno: Math.abs(errno ?? 0) || ENOSYS, path: program, cause: error })
  }
  if (child.pid === undefined) {
    // libuv failed the spawn (reported later as 'error'): tell which check fails now, or EAGAIN.
    child.on('error', () => {})
    checkProgram(program)
    checkCwd(options.cwd)
    throw new SpawnError({ stage: 'clone', errno: osConstants.errno.EAGAIN, path: program })
  }
  return portableChildOf(child, child.pid, options)
}
