/**
 * Runs a (confined) spec through the real subprocess runtime, exactly as a caller would — the
 * launcher's supervisor for Landlock, the bwrap wrapper for bubblewrap — collecting stdout,
 * stderr and the exit, and waiting until the whole tree is gone.
 */
import type { Socket } from 'node:net'
import type { OutputPipe } from '../../../src/subprocess/process/child.js'
import { NativePipe } from '../../../src/subprocess/output/native-pipe.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'

/** One finished run. */
export interface RunResult {
  stdout: string
  stderr: string
  exitCode: number | null
  signal: string | null
}

/** Everything a socket yields until it closes, as UTF-8. */
export function read(socket: Socket | OutputPipe | undefined): Promise<string> {
  // A pipe with a reader (a NativePipe) emits no 'data': only sockets are read here.
  if (socket instanceof NativePipe) throw new Error('read(): this pipe was given a reader')
  return new Promise((resolve, reject) => {
    if (!socket) return resolve('')
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

let shared: LocalSubprocessRuntime | undefined

/** The runtime the test file's runs share, made on first use. */
function sharedRuntime(): LocalSubprocessRuntime {
  shared ??= new LocalSubprocessRuntime()
  return shared
}

/** Where runSpec runs a spec, and what it tells the caller. */
export interface RunSpecOptions {
  /** The runtime to spawn in (default: one shared by the test file). */
  runtime?: LocalSubprocessRuntime
  /** Called once the command started (spawn returned), before its output is awaited. */
  onSpawned?: () => void
}

/** Runs `spec` (rejects with SpawnError when it could not start) and collects it. */
export async function runSpec(
  spec: SubprocessSpawnSpec,
  timeoutMs = 20_000,
  options: RunSpecOptions = {},
): Promise<RunResult> {
  const runtime = options.runtime ?? sharedRuntime()
  const handle = runtime.spawn({
    ...spec,
    signal: AbortSignal.timeout(timeoutMs),
    stdio: { stdin: 'ignore', stdout: { maxBytes: 1 << 22 }, stderr: { maxBytes: 1 << 22 } },
  })
  options.onSpawned?.()
  const exit = await handle.done
  await handle.waitForExit()
  return {
    stdout: handle.collected.stdout?.readFrom(0).text ?? '',
    stderr: handle.collected.stderr?.readFrom(0).text ?? '',
    exitCode: exit.exitCode,
    signal: exit.signal,
  }
}

/** A spawn spec with the fields the tests do not care about filled in. */
export function specFor(argv: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): SubprocessSpawnSpec {
  return {
    argv,
    cwd,
    graceMs: 1000,
    stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    ...(env === undefined ? {} : { env }),
  }
}
