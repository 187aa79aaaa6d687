/**
 * The one place that knows node-pty: the part of its shape cordon uses, and its lazy loader.
 * node-pty is an optional dependency, so nothing imports it at module load: `loadPty()` imports
 * it on the first `spawnTerminal` and turns any failure (not installed, native build missing)
 * into a TerminalUnavailableError that says how to get it. Everything else in cordon works
 * without it.
 */
import { createRequire } from 'node:module'
import { TerminalUnavailableError } from './errors.js'

/** node-pty's disposable. */
export interface PtyDisposable {
  dispose(): void
}

/** The fork options cordon passes (node-pty's IPtyForkOptions, the fields we use). */
export interface PtyForkOptions {
  /** The terminal type; node-pty also exports it as TERM. */
  name: string
  cols: number
  rows: number
  cwd: string
  /** The complete environment (node-pty sanitizes only `process.env` itself, which we never pass). */
  env: Record<string, string>
  /**
   * null: the master is read as bytes, which cordon decodes itself. Text mode would decode in the
   * socket, where the bytes recovered after a premature EOF (see local-terminal.ts) could no longer be
   * joined to a character cut in two; its one other effect, IUTF8, is lost with it.
   */
  encoding: null
}

/** One forked terminal (node-pty's IPty on Unix, the members cordon uses). */
export interface PtyProcess {
  readonly pid: number
  /** The slave's path (`/dev/pts/N`); node-pty's UnixTerminal has it, the interface does not promise it. */
  readonly ptsName?: string
  /** The master's descriptor in the host (UnixTerminal has it; the interface does not promise it). */
  readonly fd?: number
  readonly onData: (listener: (data: string | Buffer) => void) => PtyDisposable
  /** Fires after the top process is reaped and the master stopped reading (EIO, or 200 ms later). */
  readonly onExit: (listener: (event: { exitCode: number; signal?: number }) => void) => PtyDisposable
  write(data: string | Buffer): void
  resize(cols: number, rows: number): void
  pause(): void
  resume(): void
  /**
   * The master's socket events, forwarded by UnixTerminal: 'error' (a listener keeps node-pty from
   * rethrowing a read error) and 'end' (EOF, emitted before the socket closes the descriptor).
   */
  on?(event: 'error' | 'end', listener: (error?: Error) => void): void
}

/** The module's shape: one spawn function. */
export interface PtyModule {
  spawn(file: string, args: string[], options: PtyForkOptions): PtyProcess
}

/** Loads the terminal backend; injectable so embedders (and tests) can supply or withhold it. */
export type PtyLoader = () => Promise<PtyModule>

/** The module cordon depends on (optionalDependencies). */
export const PTY_MODULE = 'node-pty'

let loaded: Promise<PtyModule> | undefined

/** Imports node-pty once; rejects with TerminalUnavailableError (and retries next time) when it cannot. */
export const loadPty: PtyLoader = () => {
  loaded ??= importPty().catch((error: unknown) => {
    loaded = undefined
    throw error
  })
  return loaded
}

async function importPty(): Promise<PtyModule> {
  let namespace: { default?: unknown; spawn?: unknown }
  try {
    // node-pty is CommonJS: require() needs no dynamic-import support (the CLI's bundle runs in a
    // vm.Script, which has none with a code cache), and a variable specifier keeps bundlers and
    // tsc from requiring the optional module at build time.
    const specifier: string = PTY_MODULE
    namespace = createRequire(import.meta.url)(specifier) as { default?: unknown; spawn?: unknown }
  } catch (error) {
    throw new TerminalUnavailableError(error)
  }
  const mod = (typeof namespace.spawn === 'function' ? namespace : namespace.default) as Partial<PtyModule> | undefined
  if (typeof mod?.spawn !== 'function') throw new TerminalUnavailableError(new Error('node-pty exports no spawn()'))
  return mod as PtyModule
}
