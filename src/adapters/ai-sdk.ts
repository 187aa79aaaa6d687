/**
 * cordon's tools for the Vercel AI SDK (`ai`, majors 6 and 7): a tool set for `generateText`,
 * `streamText` or an agent. Each tool's `execute` is an async generator: while a foreground
 * command runs it yields the output so far (preliminary results, at most one per interval), and
 * the tool's result last. The model reads that result as text (an error as error text).
 *
 * Only the package's types are imported: the input schema is the SDK's schema wrapper, made here
 * and recognised by the registered symbol `vercel.ai.schema` (the same in the
 * `@ai-sdk/provider-utils` of both majors), so nothing of `ai` loads and either major works.
 *
 * @example
 * const result = streamText({ model, prompt, tools: toAiSdkTools(createBashTools({ executor }).tools, { cwd }) })
 * for await (const part of result.fullStream)
 *   if (part.type === 'tool-result' && part.preliminary) show(part.output)
 */
import type { Schema, Tool } from 'ai'
import { DEFAULT_PROGRESS_INTERVAL_MS, DEFAULT_PROGRESS_TAIL_CHARS } from '../policy/defaults.js'
import { zod } from '../policy/schema/zod-on-demand.js'
import type { ModelTool, ToolCall, ToolResult } from '../tool/model-tool.js'
import type { ToolErrorCode } from '../tool/tool-error-codes.js'
import { type OutputSoFar, progressOf } from './progress.js'
import { checkAdapterInput, SESSION_FIELDS, type SessionContext } from './session.js'

export type { SessionContext } from './session.js'

const { z } = zod()

/** A preliminary result: the command still runs; `output` is the tail of what it printed so far. */
export interface AiSdkToolRunning extends OutputSoFar {
  status: 'running'
}

/** The final result: what the model reads (`content`), whether it is an error, and its stable code when it is. */
export interface AiSdkToolDone {
  status: 'done'
  content: string
  isError: boolean
  code?: ToolErrorCode
}

/** What a cordon tool yields in the AI SDK: progress while a command runs, the result last. */
export type AiSdkToolOutput = AiSdkToolRunning | AiSdkToolDone

/** One cordon tool as an AI SDK tool; its input is checked by the tool itself (see toAiSdkTools). */
export type AiSdkTool = Tool<unknown, AiSdkToolOutput>

/** The AI SDK tool set of `Tools`, by name (`bash`, `job_output`, `job_kill` for createBashTools). */
export type AiSdkTools<Tools extends readonly ModelTool[]> = { [Name in Tools[number]['name']]: AiSdkTool }

/** Options of toAiSdkTools: the session every call runs in, and how a running command's output is shown. */
export interface AiSdkToolsOptions extends SessionContext {
  /**
   * Preliminary results while a foreground command runs: at most one per `intervalMs` (default 200),
   * each with the last `maxChars` characters of output (default 8000); `false`: the final result only.
   */
  progress?: false | { intervalMs?: number | undefined; maxChars?: number | undefined } | undefined
}

const OptionsSchema = z.strictObject(
  {
    ...SESSION_FIELDS,
    progress: z
      .union(
        [
          z.literal(false),
          z.strictObject({
            intervalMs: z.number().int().nonnegative().optional(),
            maxChars: z.number().int().positive().optional(),
          }),
        ],
        { error: 'must be false or { intervalMs?, maxChars? }' },
      )
      .optional(),
  },
  { error: 'expected { agent?, sessionId?, cwd?, sessionMode?, progress? }' },
)

/** The AI SDK's mark of its own schema wrapper (`Symbol.for`, so one symbol across copies and majors). */
const SCHEMA_MARK = Symbol.for('vercel.ai.schema')

/**
 * `tool`'s JSON Schema in the SDK's wrapper. No `validate`: the tool's own `execute` checks the
 * input, so a bad argument is the INVALID_ARGUMENTS text the model reads, as with every adapter,
 * and the unsandboxed bash tool still refuses an escalation field by name.
 */
function inputSchemaOf(tool: ModelTool): Schema<unknown> {
  const wrapper = { [SCHEMA_MARK]: true, _type: undefined, jsonSchema: tool.inputSchema, validate: undefined }
  // The wrapper's symbol key is a type the SDK does not export; the object is what `jsonSchema()` makes.
  return wrapper as unknown as Schema<unknown>
}

/** The final result of one call. */
function done(result: ToolResult): AiSdkToolDone {
  const out: AiSdkToolDone = { status: 'done', content: result.content, isError: result.isError }
  if (result.code !== undefined) out.code = result.code
  return out
}

/** The tool result the model reads: the result's text, as error text when it is an error. */
function modelOutput({ output }: { output: AiSdkToolOutput }): { type: 'text' | 'error-text'; value: string } {
  if (output.status === 'running') return { type: 'text', value: output.output }
  return { type: output.isError ? 'error-text' : 'text', value: output.content }
}

/**
 * The tools as an AI SDK tool set, by name, each call run with the session of `options` and the
 * SDK's `toolCallId` and `abortSignal` (checked: a bad argument throws InvalidRequestError).
 */
export function toAiSdkTools<const Tools extends readonly ModelTool[]>(
  tools: Tools,
  options?: AiSdkToolsOptions,
): AiSdkTools<Tools> {
  const { progress, ...session } = checkAdapterInput('toAiSdkTools', tools, options, OptionsSchema)
  const pace =
    progress === false
      ? undefined
      : {
          intervalMs: progress?.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
          maxChars: progress?.maxChars ?? DEFAULT_PROGRESS_TAIL_CHARS,
        }
  const set: Record<string, AiSdkTool> = {}
  for (const tool of tools) {
    set[tool.name] = {
      description: tool.description,
      inputSchema: inputSchemaOf(tool),
      strict: true,
      async *execute(input: unknown, call: { toolCallId: string; abortSignal?: AbortSignal | undefined }) {
        const run = (onOutput?: ToolCall['onOutput']) =>
          tool.execute(input, { ...session, callId: call.toolCallId, signal: call.abortSignal, onOutput })
        if (pace === undefined) {
          yield done(await run())
          return
        }
        const steps = progressOf(run, pace)
        for (let step = await steps.next(); ; step = await steps.next()) {
          if (step.done) {
            yield done(step.value)
            return
          }
          yield { status: 'running' as const, ...step.value }
        }
      },
      toModelOutput: modelOutput,
    }
  }
  return set as AiSdkTools<Tools>
}
