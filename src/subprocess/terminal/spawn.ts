/**
 * spawnTerminal on this host (seed 003): validates the request, loads node-pty, checks the
 * program and directory the way `spawn` would, hands a confined terminal its ruleset, and forks
 * the program as the session leader of a new pty (forkpty: its controlling terminal is the pty's
 * slave), behind LocalTerminal.
 */
import { existsSync } from 'node:fs'
import { SpawnError } from '../../policy/errors.js'
import { envToArray, mergeEnv, scrubbedParentEnv } from '../env/scrub.js'
import { loadNative } from '../native.js'
import { validateTerminalSpec } from '../spec/terminal-schema.js'
import type { SubprocessTerminalSpawnSpec } from '../types.js'
import { TERMINAL_PROC_REMEDY, TerminalUnavailableError } from './errors.js'
import { LocalTerminal } from './local-terminal.js'
import { checkProgram } from './program-check.js'
import type { PtyLoader, PtyModule, PtyProcess } from './pty.js'
import { handOverRuleset } from './ruleset-handover.js'

/** The terminal type when the environment names none (the reference's pty name). */
export const DEFAULT_TERM = 'dumb'

/** An AbortError (Node's `ABORT_ERR`) carrying the signal's reason. */
function abortError(prefix: string, signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  const error = new Error(
    `${prefix}: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`,
    reason === undefined ? undefined : { cause: reason },
  )
  return Object.assign(error, { name: 'AbortError', code: 'ABORT_ERR' })
}

/** The program's environment: exactly `spawn`'s (scrub, then the overrides), minus unrepresentable entries. */
function terminalEnv(overrides: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>
  for (const entry of envToArray(mergeEnv(scrubbedParentEnv(), overrides))) {
    const eq = entry.indexOf('=')
    env[entry.slice(0, eq)] = entry.slice(eq + 1)
  }
  return env
}

/** What spawnLocalTerminal needs from its runtime. */
export interface LocalTerminalHooks {
  /** Loads node-pty (or a stand-in module with its shape). */
  loadPty: PtyLoader
  /** Runs synchronously right before the fork; throwing refuses the allocation (a disposed runtime). */
  beforeFork?: () => void
  /** Runs synchronously right after the fork, with the live handle (the runtime takes ownership). */
  afterFork?: (terminal: LocalTerminal) => void
  /** Called once the top process is reaped and no member of the session is left. */
  onGone?: (terminal: LocalTerminal) => void
}

/** Forks `argv` on a new pty; forkpty(3) failing (no pty left, fork refused) is a SpawnError at `clone`. */
function forkPty(
  pty: PtyModule,
  argv: readonly string[],
  spec: SubprocessTerminalSpawnSpec,
  env: Record<string, string>,
): PtyProcess {
  try {
    return pty.spawn(argv[0]!, argv.slice(1), {
      name: env.TERM ?? DEFAULT_TERM,
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env,
      encoding: null,
    })
  } catch (error) {
    // node-pty says so without an errno.
    throw new SpawnError({
      stage: 'clone',
      errno: 0,
      path: spec.argv[0],
      detail: 'node-pty could not fork a terminal',
      cause: error,
    })
  }
}

/** Throws unless this host can observe a terminal session (/proc). */
function assertObservable(): void {
  if (!existsSync('/proc/self/stat')) {
    throw new TerminalUnavailableError(new Error(`no /proc on ${process.platform}`), {
      what: 'this provider cannot observe a terminal session here',
      remedy: TERMINAL_PROC_REMEDY,
    })
  }
}

/** Validates, loads node-pty, checks the program and cwd, then forks the terminal. */
export async function spawnLocalTerminal(
  spec: SubprocessTerminalSpawnSpec,
  hooks: LocalTerminalHooks,
): Promise<LocalTerminal> {
  validateTerminalSpec(spec)
  if (spec.signal?.aborted) throw abortError('aborted before spawn', spec.signal)
  assertObservable()
  const env = terminalEnv(spec.env)
  const pty = await hooks.loadPty()
  if (spec.signal?.aborted) throw abortError('terminal allocation aborted', spec.signal)
  checkProgram(spec, env)
  const native = loadNative() // before the fork: a missing addon refuses the allocation
  const handed = handOverRuleset(spec, native)
  hooks.beforeFork?.()
  let proc: PtyProcess
  try {
    proc = forkPty(pty, handed?.argv ?? spec.argv, spec, env)
  } finally {
    // node-pty forked synchronously: the launcher holds its copy now, the host needs none.
    if (handed !== undefined) native.closeFd(handed.fd)
  }
  // node-pty opens masters without close-on-exec: every later child of the host (the next
  // terminal's program above all, which node-pty forks without closing anything) would hold this
  // terminal's master, reading its input and keeping it from hanging up.
  if (typeof proc.fd === 'number') native.setCloexec(proc.fd)
  const terminal = new LocalTerminal(
    proc,
    { graceMs: spec.graceMs, launcher: spec.launcher === true, aftermath: spec.aftermath },
    hooks.onGone,
  )
  // The next terminal of this plan gets a ruleset built while nothing starts.
  const prepare = spec.ruleset?.prepareNext
  if (prepare) void terminal.done.finally(() => setImmediate(prepare))
  hooks.afterFork?.(terminal)
  return terminal
}
