/**
 * The shape every model-facing tool has here (bash, job_output, job_kill): a name, the
 * description a model reads, the JSON Schema of its arguments, and `execute`. What the model
 * sends (`args`) is untrusted and validated by each tool; what the harness sends with the call
 * (`ToolCall`: ids, the session's cwd and mode) is trusted and checked for shape only.
 */
import path from 'node:path'
import type { z as Z } from 'zod'
import { zod } from '../policy/schema/zod-on-demand.js'
import { InvalidRequestError } from '../policy/errors.js'
import type { SandboxMode } from '../policy/vocabulary.js'
import { SandboxModeSchema } from '../policy/schema/exported.js'
import type { ToolErrorCode } from './tool-error-codes.js'
import type { ToolInputSchema } from './tool-schema.js'

const { z } = zod()

/** What the harness passes with each invocation; one tool instance serves every session through it. */
export interface ToolCall {
  /** This call's id (an approval is bound to it). */
  callId: string
  /** The agent the call belongs to; needed to route an approval. */
  agent?: string | undefined
  sessionId?: string | undefined
  /**
   * The session's immutable cwd (absolute): this call's workspace root and the base of relative
   * workdirs. Absent: the tool's `workspaceRoot` option, else `process.cwd()`.
   */
  cwd?: string | undefined
  /** The session's mode override (the baseline an escalation must widen); absent: the executor's default. */
  sessionMode?: SandboxMode | undefined
  /** Aborts the call (a foreground command is terminated). */
  signal?: AbortSignal | undefined
  /**
   * Receives a foreground command's output as it comes (decoded text, per stream), so a harness can
   * show a long build while it runs; the result still carries the output as usual.
   */
  onOutput?: ((chunk: string, stream: 'stdout' | 'stderr') => void) | undefined
}

/** What one invocation returns: the text for the model, whether it is an error, and a stable code when it is. */
export interface ToolResult {
  content: string
  isError: boolean
  /** A stable code when `isError`, from a closed set (tool-error-codes.ts). */
  code?: ToolErrorCode
}

/** A tool as a harness registers it (the same object is an MCP tool definition). */
export interface ModelTool<Name extends string = string, Result extends ToolResult = ToolResult> {
  readonly name: Name
  readonly description: string
  /** JSON Schema of the arguments: valid for OpenAI strict mode, Anthropic tool use and MCP. */
  readonly inputSchema: ToolInputSchema
  /** The zod schema `inputSchema` is made from (what `execute` validates the offered arguments with). */
  readonly argumentsSchema: Z.ZodObject
  /**
   * Runs one call: resolves with the model's text (a refusal or failure is a result with `isError`);
   * throws InvalidRequestError only for a malformed `call` (the harness's bug, not the model's).
   */
  execute(args: unknown, call: ToolCall): Promise<Result>
}

/** A failed invocation: `content` for the model, `code` for the harness. */
export function toolError<Code extends ToolErrorCode>(
  content: string,
  code: Code,
): ToolResult & { isError: true; code: Code } {
  return { content, isError: true, code }
}

const ToolCallSchema = z.object(
  {
    callId: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
    agent: z.string({ error: 'must be a string' }).optional(),
    sessionId: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    cwd: z
      .string({ error: 'must be a string' })
      .refine((p) => path.isAbsolute(p), { error: (i) => `must be an absolute path, got ${JSON.stringify(i.input)}` })
      .optional(),
    sessionMode: SandboxModeSchema.optional(),
    signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
    onOutput: z
      .custom<NonNullable<ToolCall['onOutput']>>((v) => typeof v === 'function', { error: 'must be a function' })
      .optional(),
  },
  {
    error: 'expected the call context object ({ callId, agent?, sessionId?, cwd?, sessionMode?, signal?, onOutput? })',
  },
)

/** Checks the harness's call context; throws InvalidRequestError naming each bad field (a harness bug, not a model error). */
export function checkToolCall(call: unknown): asserts call is ToolCall {
  const parsed = ToolCallSchema.safeParse(call)
  if (!parsed.success) throw InvalidRequestError.fromZod(parsed.error, 'invalid tool call context')
}

/** Parsed arguments with every `null` read as "not given". */
export type GivenArguments<T> = { [K in keyof T]: Exclude<T[K], null> }

/** The model's arguments, parsed; `null` (a strict caller's "not given") becomes `undefined`. */
export function parseArguments<T extends Z.ZodObject>(
  schema: T,
  raw: unknown,
): { ok: true; args: GivenArguments<Z.output<T>> } | { ok: false; error: ToolResult & { code: 'INVALID_ARGUMENTS' } } {
  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    return { ok: false, error: toolError(`invalid arguments: ${issues.join('; ')}`, 'INVALID_ARGUMENTS') }
  }
  const args = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== null && v !== undefined))
  return { ok: true, args: args as GivenArguments<Z.output<T>> }
}
