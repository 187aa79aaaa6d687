/**
 * cordon's typed errors, shared by every floor (the native floor reports `{ stage, errno }`
 * and TypeScript builds the error here).
 *
 * Each error carries a stable `code`, and each has an `is…` check that brands on `name` and
 * `code` rather than `instanceof`, so it holds across realms (vm contexts, worker copies,
 * two installed copies of cordon).
 */
import os from 'node:os'
import type { z } from 'zod'
import { DEFAULT_SANDBOX_REMEDY } from './remedies.js'
import { CONFINEMENT_STAGES, type SpawnStage } from './spawn-stages.js'
import type { SandboxMode } from './vocabulary.js'

/** The code of a SandboxUnavailableError. */
export const SANDBOX_UNAVAILABLE = 'SANDBOX_UNAVAILABLE'
/** The code of an InvalidRequestError. */
export const INVALID_REQUEST = 'INVALID_REQUEST'
/** The code of a RootChangedError. */
export const ROOT_CHANGED = 'ROOT_CHANGED'
/** The code of a StateInGrantError. */
export const STATE_IN_GRANT = 'STATE_IN_GRANT'
/** The code of an AbortedError (and of the shell's CommandAbortedError). */
export const ABORTED = 'ABORTED'
/** The code of a ConfigInvalidError. */
export const CONFIG_INVALID = 'CONFIG_INVALID'
/** The code of a ConfigWidenedError. */
export const CONFIG_WIDENED = 'CONFIG_WIDENED'

export { DEFAULT_SANDBOX_REMEDY } from './remedies.js'

/** Why, when nothing more specific is known. */
export const DEFAULT_SANDBOX_REASON = 'no sandbox backend is usable on this host'

export { CONFINEMENT_STAGES, SPAWN_STAGES, type SpawnStage } from './spawn-stages.js'

/** Whether a failure at `stage` is a runner (confinement) failure rather than an ordinary spawn error. */
export function isConfinementStage(stage: string): boolean {
  return (CONFINEMENT_STAGES as readonly string[]).includes(stage)
}

const ERRNO_NAMES: ReadonlyMap<number, string> = (() => {
  const names = new Map<number, string>()
  for (const [name, value] of Object.entries(os.constants.errno)) {
    if (!names.has(value)) names.set(value, name) // aliases (EWOULDBLOCK, EDEADLOCK…): first name wins
  }
  return names
})()

/** The symbolic name of an errno (`2` → `'ENOENT'`; libuv's negative form is accepted); `'EUNKNOWN'` when the host has none. */
export function errnoName(errno: number): string {
  return ERRNO_NAMES.get(Math.abs(errno)) ?? 'EUNKNOWN'
}

/** A structured runner failure: the stage the native child reached and the kernel's errno. */
export interface RunnerFailureDetail {
  stage: SpawnStage
  /** Positive kernel errno. */
  errno: number
}

/** Options for a SandboxUnavailableError. */
export interface SandboxUnavailableOptions {
  /** Why no backend can enforce the mode; default: no sandbox backend is usable on this host. */
  reason?: string | undefined
  /** What the user can do about it; default names bubblewrap, Landlock, sandbox-exec and danger-full-access. */
  remedy?: string | undefined
  /** The runner's own failure: a stage + errno from the native child, or a fatal stderr line. */
  detail?: RunnerFailureDetail | string | undefined
  /** The underlying error, kept as-is. */
  cause?: unknown
}

/** A confined mode was asked for and cannot be enforced: cordon refuses to run the command unconfined. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError' as const
  readonly code = SANDBOX_UNAVAILABLE
  /** The mode that could not be enforced. */
  readonly mode: SandboxMode
  /** Why it could not. */
  readonly reason: string
  /** What to do about it. */
  readonly remedy: string
  /** The runner's own failure, when the runner started and refused. */
  readonly detail: RunnerFailureDetail | string | undefined

  /** `options` may be a string: the reference's `(mode, detail?)` form. */
  constructor(mode: SandboxMode, options: SandboxUnavailableOptions | string = {}) {
    const opts: SandboxUnavailableOptions = typeof options === 'string' ? { detail: options } : options
    const reason = opts.reason ?? DEFAULT_SANDBOX_REASON
    const remedy = opts.remedy ?? DEFAULT_SANDBOX_REMEDY
    const detailText =
      opts.detail === undefined
        ? ''
        : ` Runner failure: ${
            typeof opts.detail === 'string' ? opts.detail : `${opts.detail.stage}: ${errnoName(opts.detail.errno)}`
          }`
    super(
      `sandbox mode "${mode}" is requested but ${reason}; refusing to run the command unconfined. ${remedy}${detailText}`,
      opts.cause === undefined ? undefined : { cause: opts.cause },
    )
    this.mode = mode
    this.reason = reason
    this.remedy = remedy
    this.detail = opts.detail
  }
}

/** Whether `value` is a SandboxUnavailableError, from this realm or any other. */
export function isSandboxUnavailableError(value: unknown): value is SandboxUnavailableError {
  return hasBrand(value, 'SandboxUnavailableError', SANDBOX_UNAVAILABLE)
}

/** What the native floor (or a Node spawn) reports about a failed spawn. */
export interface SpawnErrorInit {
  stage: SpawnStage
  /** Kernel errno; libuv's negative form is normalised to positive. */
  errno: number
  /** The path involved (the executable for `exec`, the directory for `chdir`). */
  path?: string | undefined
  /** What the runner said about it, when it said more than an errno (bwrap's own line). */
  detail?: string | undefined
  cause?: unknown
}

/** A command could not be started; `code` is the errno's name (`ENOENT`, `EACCES`…). */
export class SpawnError extends Error {
  override readonly name = 'SpawnError' as const
  readonly code: string
  readonly stage: SpawnStage
  /** Positive kernel errno. */
  readonly errno: number
  readonly path: string | undefined
  readonly detail: string | undefined

  constructor(init: SpawnErrorInit) {
    // errno 0: the runner refused without an errno (a wrapper's own message is the detail).
    const code = init.errno === 0 ? 'ERUNNER' : errnoName(init.errno)
    super(
      `spawn failed at ${init.stage}: ${code}${init.path === undefined ? '' : ` (${init.path})`}${init.detail === undefined ? '' : `: ${init.detail}`}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    )
    this.code = code
    this.stage = init.stage
    this.errno = Math.abs(init.errno)
    this.path = init.path
    this.detail = init.detail
  }
}

/** Whether `value` is a SpawnError, from this realm or any other. */
export function isSpawnError(value: unknown): value is SpawnError {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return (
    v.name === 'SpawnError' && typeof v.code === 'string' && typeof v.stage === 'string' && typeof v.errno === 'number'
  )
}

/** A request or configuration was malformed; `issues` lists every problem, each naming its field. */
export class InvalidRequestError extends Error {
  override readonly name = 'InvalidRequestError' as const
  readonly code = INVALID_REQUEST
  /** One line per problem, each starting with the field it concerns (`field: what is wrong`). */
  readonly issues: readonly string[]

  constructor(issues: readonly string[], options: { context?: string; cause?: unknown } = {}) {
    const list = issues.length === 0 ? ['(no details)'] : issues
    super(
      `${options.context ?? 'invalid request'}: ${list.join('; ')}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    )
    this.issues = Object.freeze([...list])
  }

  /** Builds the error from a zod failure, listing every issue as `path: message`. */
  static fromZod(error: z.ZodError, context?: string): InvalidRequestError {
    return new InvalidRequestError(formatZodIssues(error), { context, cause: error })
  }
}

/** Whether `value` is an InvalidRequestError, from this realm or any other. */
export function isInvalidRequestError(value: unknown): value is InvalidRequestError {
  return hasBrand(value, 'InvalidRequestError', INVALID_REQUEST)
}

/** Every issue of a zod error as one `path: message` line (`(root)` when the path is empty). */
export function formatZodIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.length === 0 ? '(root)' : formatIssuePath(issue.path)
    return `${where}: ${issue.message}`
  })
}

function formatIssuePath(segments: readonly PropertyKey[]): string {
  let out = ''
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`
    else out += out === '' ? String(segment) : `.${String(segment)}`
  }
  return out
}

/**
 * A root of this session is no longer the directory it was when the session first used it (it
 * was replaced, e.g. by a symlink, between two runs). Nothing was run. Not SANDBOX_UNAVAILABLE:
 * the sandbox works, the request's root is what changed (harnesses fall back to
 * danger-full-access on SANDBOX_UNAVAILABLE, which must not be the answer to a swapped root).
 */
export class RootChangedError extends Error {
  override readonly name = 'RootChangedError' as const
  readonly code = ROOT_CHANGED
  constructor(
    readonly path: string,
    readonly sessionId: string | undefined,
  ) {
    super(
      `cordon: the root ${path} is not the directory this session${sessionId === undefined ? '' : ` (${sessionId})`} first used (it was replaced since); nothing was run. Resolve the root again in a new session if the change is wanted.`,
    )
  }
}

/** Whether `value` is a RootChangedError, from this realm or any other. */
export function isRootChangedError(value: unknown): value is RootChangedError {
  return hasBrand(value, 'RootChangedError', ROOT_CHANGED)
}

/**
 * A writable root (the workspace or an extra dir) holds cordon's own state or a program the host
 * runs: its private dir (the probe verdict), its configuration, its package, or its helper. A run
 * could rewrite what a later, stronger run trusts. Nothing was run. Not SANDBOX_UNAVAILABLE: the
 * request's roots are what is wrong (or, for a program, the backends this host can use).
 */
export class StateInGrantError extends Error {
  override readonly name = 'StateInGrantError' as const
  readonly code = STATE_IN_GRANT
  constructor(
    /** The writable root as granted. */
    readonly root: string,
    /** What of cordon's lies in it. */
    readonly path: string,
    /** Why that root cannot be writable. */
    readonly reason: string,
    /** What a person can do about it. */
    readonly remedy = 'Give a directory beside it.',
  ) {
    super(`the writable root ${root} holds ${path}: ${reason}; nothing was run. ${remedy}`)
  }
}

/** Whether `value` is a StateInGrantError, from this realm or any other. */
export function isStateInGrantError(value: unknown): value is StateInGrantError {
  return hasBrand(value, 'StateInGrantError', STATE_IN_GRANT)
}

/**
 * A configuration file cannot be used: it is not JSON, breaks the schema, is too large, or is not a
 * regular file (a project config that is a symlink). Nothing was run. `issues` are `field: what
 * was expected, got …` lines; `(file)` names a problem of the file itself, `(root)` of its top level.
 */
export class ConfigInvalidError extends Error {
  override readonly name = 'ConfigInvalidError' as const
  readonly code = CONFIG_INVALID
  readonly issues: readonly string[]
  constructor(
    /** The file, as cordon opened it. */
    readonly file: string,
    issues: readonly string[],
    options: { cause?: unknown } = {},
  ) {
    const list = issues.length === 0 ? ['(file): unreadable'] : issues
    super(
      `invalid config ${JSON.stringify(file)}: ${list.join('; ')}; nothing was run`,
      options.cause === undefined ? undefined : { cause: options.cause },
    )
    this.issues = Object.freeze([...list])
  }
}

/** Whether `value` is a ConfigInvalidError, from this realm or any other. */
export function isConfigInvalidError(value: unknown): value is ConfigInvalidError {
  return hasBrand(value, 'ConfigInvalidError', CONFIG_INVALID)
}

/** One setting a project config would widen: what it was and what it would be (as display text). */
export interface ConfigWidening {
  /** The field (`mode`, `network.allow`, `limits.processes`…). */
  field: string
  was: string
  is: string
}

/**
 * A project config is wider than what it may be: wider than the layers before it (the defaults and
 * the user config: a project config only narrows), or wider than the one cordon last loaded from
 * that file (a run may have rewritten, removed or replaced it). Nothing was run.
 */
export class ConfigWidenedError extends Error {
  override readonly name = 'ConfigWidenedError' as const
  readonly code = CONFIG_WIDENED
  readonly widenings: readonly ConfigWidening[]
  constructor(
    /** The project config file. */
    readonly file: string,
    widenings: readonly ConfigWidening[],
    /** `layers`: wider than the defaults and user config; `record`: wider than the file last loaded. */
    readonly against: 'layers' | 'record',
    /** What a person can do about it. */
    readonly remedy: string,
  ) {
    const bound = against === 'layers' ? 'at most' : 'was'
    const what = widenings.map((w) => `${w.field}: ${bound} ${w.was}, is ${w.is}`).join('; ')
    const than =
      against === 'layers'
        ? 'is wider than the defaults and the user config allow (a project config may only narrow them)'
        : 'is wider than the one cordon last loaded from it (a run may have changed it)'
    super(`the project config ${JSON.stringify(file)} ${than}: ${what}; nothing was run. ${remedy}`)
    this.widenings = Object.freeze(widenings.map((w) => Object.freeze({ ...w })))
  }
}

/** Whether `value` is a ConfigWidenedError, from this realm or any other. */
export function isConfigWidenedError(value: unknown): value is ConfigWidenedError {
  return hasBrand(value, 'ConfigWidenedError', CONFIG_WIDENED)
}

/** `aborted before spawn: <reason>`: the reason's message, or the reason itself, or `aborted`. */
export function abortedBeforeSpawnText(reason: unknown): string {
  return `aborted before spawn: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`
}

/**
 * The caller's signal had already aborted when a command was to start: nothing was spawned (and
 * no sandbox was asked). A cancellation, never a sandbox error; `reason` is the signal's reason.
 */
export class AbortedError extends Error {
  override readonly name: string = 'AbortedError'
  readonly code = ABORTED
  /** The abort reason of the caller's signal, as given. */
  readonly reason: unknown

  constructor(reason: unknown) {
    super(abortedBeforeSpawnText(reason), { cause: reason })
    this.reason = reason
  }
}

/** Whether `value` is an AbortedError (a CommandAbortedError included), from this realm or any other. */
export function isAbortedError(value: unknown): value is AbortedError {
  return hasBrand(value, 'AbortedError', ABORTED) || hasBrand(value, 'CommandAbortedError', ABORTED)
}

function hasBrand(value: unknown, name: string, code: string): boolean {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return v.name === name && v.code === code
}
