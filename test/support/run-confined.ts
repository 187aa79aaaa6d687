/**
 * Runs a spec's argv through the native spawn with the spec's confinement plan (what the
 * runtime does), collecting stdout, stderr and the exit.
 */
import type { Socket } from 'node:net'
import { startChild } from '../../src/subprocess/child.js'
import { StdioKind } from '../../src/subprocess/native.js'
import type { SubprocessSpawnSpec } from '../../src/subprocess/types.js'

/** One finished run. */
export interface RunResult {
  stdout: string
  stderr: string
  exitCode: number | null
  signal: string | null
}

/** Everything a socket yields until it closes, as UTF-8. */
export function read(socket: Socket | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!socket) return resolve('')
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

/** The environment a spec's child gets: the host's (minus nothing, tests only) plus `spec.env`. */
export function envOf(spec: SubprocessSpawnSpec): string[] {
  const merged: Record<string, string | undefined> = { ...process.env, ...spec.env }
  return Object.entries(merged).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]))
}

/** Starts `spec` (throws SpawnError before exec) and collects it. */
export async function runSpec(spec: SubprocessSpawnSpec, timeoutMs = 20_000): Promise<RunResult> {
  const child = startChild({
    argv: spec.argv,
    env: envOf(spec),
    cwd: spec.cwd,
    stdio: [StdioKind.Null, StdioKind.Pipe, StdioKind.Pipe],
    confinement: spec.confinement?.plan,
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const [stdout, stderr, exit] = await Promise.all([read(child.stdout), read(child.stderr), child.exit])
  clearTimeout(timer)
  return { stdout, stderr, exitCode: exit.exitCode, signal: exit.signal }
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
