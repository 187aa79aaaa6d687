/**
 * The executor's configuration: defaults from the reference (dsh bash-local, kept in
 * policy/defaults.ts), validated once at construction so a bad value fails loudly instead of at
 * the first command.
 */
import { isAbsolute } from 'node:path'
import {
  DEFAULT_GRACE_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_SPILL_BYTES,
  DEFAULT_SANDBOX_MODE,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
} from '../policy/defaults.js'
import { InvalidRequestError } from '../policy/errors.js'
import { isSandboxMode, type SandboxMode } from '../policy/vocabulary.js'
import { vocabularySchemas } from '../policy/schema/vocabulary.js'
import { onDemand, zod } from '../policy/schema/zod-on-demand.js'
import { MAX_TIMER_DELAY_MS } from '../subprocess/spec/schema.js'
import type { SubprocessEnvironmentMode } from '../subprocess/types.js'

/** Options of LocalShellExecutor (every number positive and finite). */
export interface LocalShellExecutorOptions {
  /** Default working directory (absolute); default `process.cwd()`. */
  cwd?: string
  /** Default timeout of a foreground run; default 120000; at most MAX_TIMER_DELAY_MS (a Node timer's longest). */
  timeoutMs?: number
  /** Cap on any requested timeout (a longer request gets this); default 600000; at most MAX_TIMER_DELAY_MS. */
  maxTimeoutMs?: number
  /** In-memory tail per stream; default 64000. */
  maxOutputBytes?: number
  /** Spill cap per stream; default 64 MiB. */
  maxSpillBytes?: number
  /** TERM → KILL grace, and pipe drain after exit; default 3000. */
  graceMs?: number
  /** Default mode of a sandboxing executor; default `read-only`. */
  defaultMode?: SandboxMode
  /** Workspace root of default policies; default `cwd`. */
  workspaceRoot?: string
  /**
   * What reaches a command of the host's environment: `scrubbed` (default: every name but
   * credentials, agent sockets and the DSH_ namespace) or `minimal` (PATH, HOME, USER, LOGNAME,
   * SHELL, LANG, LC_*, TZ, TERM, TMPDIR only). A request's explicit `env` entries always survive.
   */
  environment?: SubprocessEnvironmentMode
  /**
   * Where spill files go (an existing private dir); default: a confined run's session spill dir
   * (readable by the session's commands, removed with the sandbox), else the runtime's own.
   */
  spillDir?: string
}

/** The filled configuration. */
export interface ExecutorConfig {
  cwd: string
  timeoutMs: number
  maxTimeoutMs: number
  maxOutputBytes: number
  maxSpillBytes: number
  graceMs: number
  defaultMode: SandboxMode
  workspaceRoot: string
  environment: SubprocessEnvironmentMode
  spillDir: string | undefined
}

const configSchema = onDemand(() => {
  const { z } = zod()
  const positive = z.number().refine((n) => Number.isFinite(n) && n > 0, 'must be a positive finite number')
  const absolute = z.string().refine((p) => isAbsolute(p), 'must be an absolute path')
  // A longer delay would fire after 1 ms (Node's timer overflow): refused, as graceMs is.
  const timer = positive.refine((n) => n <= MAX_TIMER_DELAY_MS, `must be at most ${MAX_TIMER_DELAY_MS}`)
  return z.object({
    cwd: absolute,
    timeoutMs: timer,
    maxTimeoutMs: timer,
    maxOutputBytes: positive.refine(Number.isInteger, 'must be a whole number of bytes'),
    maxSpillBytes: positive.refine(Number.isInteger, 'must be a whole number of bytes'),
    graceMs: timer,
    defaultMode: vocabularySchemas().SandboxModeSchema,
    workspaceRoot: absolute,
    environment: z.enum(['scrubbed', 'minimal']),
    spillDir: absolute.optional(),
  })
})

const isPositive = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0
/** A delay a Node timer holds: positive, finite, at most MAX_TIMER_DELAY_MS. */
const isTimerDelay = (n: unknown): n is number => isPositive(n) && n <= MAX_TIMER_DELAY_MS

/** Returns when `ms` is a delay a Node timer holds; else throws InvalidRequestError naming `field` and the maximum. */
export function checkTimerDelay(field: string, ms: unknown): void {
  if (!isTimerDelay(ms))
    throw new InvalidRequestError([`${field}: must be a positive number of ms, at most ${MAX_TIMER_DELAY_MS}`], {
      context: 'cordon: invalid shell request',
    })
}
const isAbsoluteString = (p: unknown) => typeof p === 'string' && isAbsolute(p)

/** True only when the config schema accepts `c` (false: ask the schema, which names what is wrong). */
function certainlyValidConfig(c: ExecutorConfig): boolean {
  return (
    isAbsoluteString(c.cwd) &&
    isTimerDelay(c.timeoutMs) &&
    isTimerDelay(c.maxTimeoutMs) &&
    isPositive(c.maxOutputBytes) &&
    Number.isInteger(c.maxOutputBytes) &&
    isPositive(c.maxSpillBytes) &&
    Number.isInteger(c.maxSpillBytes) &&
    isTimerDelay(c.graceMs) &&
    isSandboxMode(c.defaultMode) &&
    isAbsoluteString(c.workspaceRoot) &&
    (c.environment === 'scrubbed' || c.environment === 'minimal') &&
    (c.spillDir === undefined || isAbsoluteString(c.spillDir))
  )
}

/** Fills defaults and validates; throws InvalidRequestError naming every bad option. */
export function executorConfig(options: LocalShellExecutorOptions): ExecutorConfig {
  const cwd = options.cwd ?? process.cwd()
  const config = {
    cwd,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxTimeoutMs: options.maxTimeoutMs ?? MAX_TIMEOUT_MS,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    maxSpillBytes: options.maxSpillBytes ?? DEFAULT_MAX_SPILL_BYTES,
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    defaultMode: options.defaultMode ?? DEFAULT_SANDBOX_MODE,
    workspaceRoot: options.workspaceRoot ?? cwd,
    environment: options.environment ?? 'scrubbed',
    spillDir: options.spillDir,
  }
  if (certainlyValidConfig(config)) return config
  const parsed = configSchema().safeParse(config)
  if (!parsed.success) throw InvalidRequestError.fromZod(parsed.error, 'invalid LocalShellExecutor options')
  return config
}
