/**
 * Starts a TypeScript script of the repository in a plain Node child as root or as uid 65534
 * (setpriv, no groups), the way a harness on this host would run: in a session keyring of its
 * own that every process it starts inherits (as a login session's is), from `/`. Asynchronous,
 * so the escape suite's runners for every backend and user run side by side.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { AttackUser } from '../attacks/attack.js'
import { PYTHON } from './host-objects.js'

/** uid and gid of `nobody`. */
export const NOBODY = 65534

/** Every user the escape suite runs as. */
export const USERS: readonly AttackUser[] = ['root', 'nobody']

/** The repository root. */
export const REPO = path.resolve(import.meta.dirname, '..', '..', '..')

// Joins a new anonymous session keyring (KEYCTL_JOIN_SESSION_KEYRING, no name: it goes with the
// session; a named one can outlive it and count against the uid's key quota), then becomes argv[1:].
const IN_SESSION_KEYRING = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(250, 1, None) < 0:
    raise OSError(ctypes.get_errno(), "keyctl join")
os.execv(sys.argv[1], sys.argv[1:])
`

/** The argv that runs `script` (a .ts path) with `args` as `user`. */
export function nodeArgvAs(user: AttackUser, script: string, args: readonly string[]): string[] {
  const node = [process.execPath, '--import', path.join(REPO, 'test/fixtures/ts-hooks.mjs'), script, ...args]
  const inSession = [PYTHON, '-c', IN_SESSION_KEYRING, ...node]
  if (user === 'root') return inSession
  return ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...inSession]
}

/** What a finished script printed. */
export interface ScriptResult {
  stdout: string
  stderr: string
  code: number | null
  signal: NodeJS.Signals | null
}

/** How a script is started besides its user. */
export interface ScriptOptions {
  /** Its stdout: this descriptor of the test process (default: a pipe, returned as `stdout`). */
  stdoutFd?: number
  /** An argv run in front of it (as root), e.g. a terminal that owns its stdout. */
  prefix?: readonly string[]
  timeoutMs?: number
}

/** Runs `script` as `user` to its end (killed after `timeoutMs`). */
export function runScriptAs(
  user: AttackUser,
  script: string,
  args: readonly string[],
  options: ScriptOptions = {},
): Promise<ScriptResult> {
  const argv = [...(options.prefix ?? []), ...nodeArgvAs(user, script, args)]
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/' },
    stdio: ['ignore', options.stdoutFd ?? 'pipe', 'pipe'],
    timeout: options.timeoutMs ?? 300_000,
    killSignal: 'SIGKILL',
  })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout?.on('data', (c: Buffer) => out.push(c))
  child.stderr?.on('data', (c: Buffer) => err.push(c))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) =>
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        code,
        signal,
      }),
    )
  })
}

/** Starts `script` as `user` and hands back the live child (its pid is the script's own: setpriv and python exec). */
export function spawnScriptAs(user: AttackUser, script: string, args: readonly string[]): ChildProcess {
  const argv = nodeArgvAs(user, script, args)
  return spawn(argv[0]!, argv.slice(1), {
    cwd: '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
}

const SCENARIO_HOST = path.join(REPO, 'test/escape/host/scenario-host.ts')

/** Runs scenario `name` of scenario-host.ts as `user` in `dir` (owned by that user); its result. */
export async function runScenario<T>(
  user: AttackUser,
  name: string,
  dir: string,
  args: object,
  options: ScriptOptions & { onStdout?: (stdout: string) => void } = {},
): Promise<T> {
  const resultFile = path.join(dir, `result-${name}.json`)
  const r = await runScriptAs(user, SCENARIO_HOST, [name, resultFile, JSON.stringify(args)], options)
  options.onStdout?.(r.stdout)
  let parsed: { uid: number; result?: T; error?: string }
  try {
    parsed = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as typeof parsed
  } catch {
    throw new Error(`scenario ${name} as ${user} left no result (exit ${r.code ?? r.signal}): ${r.stderr}`)
  }
  if (parsed.error !== undefined) throw new Error(`scenario ${name} as ${user} failed: ${parsed.error}`)
  if (parsed.uid !== (user === 'root' ? 0 : NOBODY)) throw new Error(`scenario ${name} ran as uid ${parsed.uid}`)
  return parsed.result as T
}

/** Starts scenario `name` as `user` without waiting (for a host that is to be killed). */
export function startScenario(user: AttackUser, name: string, dir: string, args: object): ChildProcess {
  return spawnScriptAs(user, SCENARIO_HOST, [name, path.join(dir, `result-${name}.json`), JSON.stringify(args)])
}
