/**
 * The executor's configuration: defaults from the reference (dsh bash-local, kept in
 * policy/defaults.ts), validated once at construction so a bad value fails loudly instead of at
 * the first command. And the checks of what each call brings (a request, a hand-made spec): a
 * JavaScript caller's wrong type is an InvalidRequestError naming the field, before anything starts.
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
import { formatZodIssues, InvalidRequestError } from '../policy/errors.js'
import { isWellFormedPolicy } from '../policy/schema/fast-check.js'
import { isSandboxMode, type SandboxMode } from '../policy/vocabulary.js'
import { vocabularySchemas } from '../policy/schema/vocabulary.js'
import { onDemand, zod } from '../policy/schema/zod-on-demand.js'
import { MAX_TIMER_DELAY_MS } from '../subprocess/spec/schema.js'
import type { SubprocessEnvironmentMode } from '../subprocess/types.js'
import type { ShellExecRequest, ShellExecSpec } from './types.js'

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

const isAbsoluteString = (p: unknown) => typeof p === 'string' && isAbsolute(p)

const REQUEST_CONTEXT = 'cordon: invalid shell request'
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/** A string a process can be given (execve ends one at a NUL byte). */
const noNul = (v: unknown) => typeof v === 'string' && !v.includes('\0')
const stringValues = (v: unknown) =>
  isObject(v) && Object.values(v).every((x) => x === undefined || typeof x === 'string')
const byteBudget = (v: unknown) => Number.isSafeInteger(v) && (v as number) > 0

/** One field a call may bring: its name, what it must be, and how the issue says so. */
type FieldRule = readonly [field: string, ok: (v: unknown) => boolean, what: string]

/** The optional fields a request and a spec share (the policy is the sandbox's: checked apart). */
const SHARED_RULES: readonly FieldRule[] = [
  ['signal', (v) => v instanceof AbortSignal, 'must be an AbortSignal'],
  ['stdin', (v) => typeof v === 'string', 'must be a string'],
  ['env', stringValues, 'must be an object of string values'],
  ['dshEnv', stringValues, 'must be an object of string values'],
  ['execution', stringValues, 'must be an object of string ids ({ sessionId?, callId?, agent? })'],
]
const REQUEST_RULES: readonly FieldRule[] = [
  ['workdir', noNul, 'must be a path without NUL bytes'],
  ['timeoutMs', isPositive, 'must be a positive finite number'],
  ['stdoutMaxBytes', byteBudget, 'must be a positive whole number of bytes'],
  ...SHARED_RULES,
]

/** The issues of `r`'s fields, each `where.field: what`; an absent (undefined) field has none. */
function fieldIssues(r: Record<string, unknown>, where: string, rules: readonly FieldRule[]): string[] {
  return rules.flatMap(([field, ok, what]) =>
    r[field] === undefined || ok(r[field]) ? [] : [`${where}.${field}: ${what}`],
  )
}

/** The issues of a confining executor's policy, each as `where.sandboxPolicy.field: what`. */
function policyIssues(policy: unknown, where: string): string[] {
  if (policy === undefined || isWellFormedPolicy(policy)) return []
  const parsed = vocabularySchemas().SandboxExecutionPolicySchema.safeParse(policy)
  if (parsed.success) return []
  return formatZodIssues(parsed.error).map((issue) =>
    issue.startsWith('(root)') ? `${where}.sandboxPolicy${issue.slice(6)}` : `${where}.sandboxPolicy.${issue}`,
  )
}

/**
 * Throws InvalidRequestError naming every field of `request` resolve cannot take: a command that
 * is no string (or holds a NUL byte), a bad workdir, timeout or budget, a wrong type elsewhere,
 * and, for a confining executor (`confined`), a malformed policy.
 */
export function checkShellRequest(request: unknown, confined: boolean): asserts request is ShellExecRequest {
  if (!isObject(request))
    throw new InvalidRequestError(['request: must be an object ({ command, workdir?, timeoutMs?, … })'], {
      context: REQUEST_CONTEXT,
    })
  const issues = [
    ...(noNul(request.command) ? [] : ['request.command: must be a string without NUL bytes']),
    ...fieldIssues(request, 'request', REQUEST_RULES),
    ...(confined ? policyIssues(request.sandboxPolicy, 'request') : []),
  ]
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: REQUEST_CONTEXT })
}

/**
 * Throws InvalidRequestError naming every field of a `spec` (made by resolve, or by hand) that
 * run (`foreground`) or start cannot take; start ignores the timeout and the stdout budget.
 */
export function checkShellSpec(
  spec: unknown,
  options: { foreground: boolean; confined: boolean },
): asserts spec is ShellExecSpec {
  if (!isObject(spec))
    throw new InvalidRequestError(['spec: must be an object (what resolve returns)'], { context: REQUEST_CONTEXT })
  const rules: FieldRule[] = [
    ['workdir', (v) => noNul(v) && isAbsolute(v as string), 'must be an absolute path without NUL bytes'],
  ]
  if (options.foreground) {
    rules.push(
      ['timeoutMs', isTimerDelay, `must be a positive number of ms, at most ${MAX_TIMER_DELAY_MS}`],
      ['stdoutMaxBytes', byteBudget, 'must be a positive whole number of bytes'],
    )
  }
  const required = options.foreground ? ['workdir', 'timeoutMs', 'stdoutMaxBytes'] : ['workdir']
  const issues = [
    ...(noNul(spec.command) ? [] : ['spec.command: must be a string without NUL bytes']),
    ...required.filter((f) => spec[f] === undefined).map((f) => `spec.${f}: required`),
    ...fieldIssues(spec, 'spec', [...rules, ...SHARED_RULES]),
    ...(options.confined ? policyIssues(spec.sandboxPolicy, 'spec') : []),
  ]
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: REQUEST_CONTEXT })
}

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
