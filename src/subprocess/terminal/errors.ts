/**
 * The terminal primitive's typed errors. Like `policy/errors.ts`, each carries a stable `code`
 * and an `is…` check that brands on `name` and `code`, so it holds across realms.
 */

/** The code of a TerminalUnavailableError. */
export const TERMINAL_UNAVAILABLE = 'TERMINAL_UNAVAILABLE'
/** The code of a TerminalCleanupError. */
export const TERMINAL_CLEANUP_FAILED = 'TERMINAL_CLEANUP_FAILED'

/** What a person does to get terminals: install the optional dependency (it compiles on Linux). */
export const TERMINAL_REMEDY =
  'install the optional dependency node-pty (npm install node-pty@^1.1); on Linux its install compiles a ' +
  'native addon, which needs python3, make and g++ (apt-get install -y python3 make g++) and, to build against ' +
  'the local Node headers without a download, npm_config_nodedir=/usr'

/** What to do when the host has no /proc to watch sessions through. */
export const TERMINAL_PROC_REMEDY =
  'terminal sessions are observed through /proc, so they run on Linux with /proc mounted; elsewhere use spawn()'

/**
 * spawnTerminal cannot work here: node-pty could not be loaded (nothing else in cordon needs it),
 * or the host has no /proc to observe sessions through.
 */
export class TerminalUnavailableError extends Error {
  override readonly name = 'TerminalUnavailableError' as const
  readonly code = TERMINAL_UNAVAILABLE
  /** What to do about it. */
  readonly remedy: string

  constructor(cause: unknown, options: { what?: string; remedy?: string } = {}) {
    const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause)
    const what = options.what ?? 'the terminal backend node-pty could not be loaded'
    const remedy = options.remedy ?? TERMINAL_REMEDY
    super(`spawnTerminal: ${what} (${why}); ${remedy}`, { cause })
    this.remedy = remedy
  }
}

/** Whether `value` is a TerminalUnavailableError, from this realm or any other. */
export function isTerminalUnavailableError(value: unknown): value is TerminalUnavailableError {
  return hasBrand(value, 'TerminalUnavailableError', TERMINAL_UNAVAILABLE)
}

/** A terminal session could not be quiesced: these processes were still alive after the whole ladder. */
export class TerminalCleanupError extends Error {
  override readonly name = 'TerminalCleanupError' as const
  readonly code = TERMINAL_CLEANUP_FAILED
  /** Every surviving pid, ascending. */
  readonly pids: readonly number[]
  /** Whether the top process itself had not been reaped. */
  readonly topProcessAlive: boolean

  constructor(pids: readonly number[], options: { topProcessAlive?: boolean; cause?: unknown } = {}) {
    const sorted = [...new Set(pids)].sort((a, b) => a - b)
    super(
      `terminal cleanup failed; surviving pid(s): ${sorted.join(', ')}` +
        (options.topProcessAlive ? ' (the top process was not reaped)' : ''),
      options.cause === undefined ? undefined : { cause: options.cause },
    )
    this.pids = Object.freeze(sorted)
    this.topProcessAlive = options.topProcessAlive === true
  }
}

/** Whether `value` is a TerminalCleanupError, from this realm or any other. */
export function isTerminalCleanupError(value: unknown): value is TerminalCleanupError {
  return hasBrand(value, 'TerminalCleanupError', TERMINAL_CLEANUP_FAILED)
}

function hasBrand(value: unknown, name: string, code: string): boolean {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return v.name === name && v.code === code
}
