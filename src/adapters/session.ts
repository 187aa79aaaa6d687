/**
 * What the harness adapters share: the session context a harness gives once (agent, session,
 * cwd, mode), checked when the adapter is made, and one way to run a model's call by tool name.
 * The call's id comes from the package's own tool call, so a harness never invents one. A model's
 * mistake (a bad JSON, an unknown tool) is a tool result the model reads; a harness's mistake
 * (a bad tool list or context) throws InvalidRequestError naming each bad field.
 */
import path from 'node:path'
import type { z as Z } from 'zod'
import { InvalidRequestError } from '../policy/errors.js'
import { vocabularySchemas } from '../policy/schema/vocabulary.js'
import { zod } from '../policy/schema/zod-on-demand.js'
import { type ModelTool, type ToolCall, type ToolResult, toolError } from '../tool/model-tool.js'

const { z } = zod()

/** What a harness's session gives every call an adapter runs (see ToolCall for each field). */
export type SessionContext = Pick<ToolCall, 'agent' | 'sessionId' | 'cwd' | 'sessionMode'>

/** What a harness may give one run: its abort signal, and a sink for a foreground command's output as it comes. */
export type RunOptions = Pick<ToolCall, 'signal' | 'onOutput'>

/** The session fields every adapter accepts, with the rules ToolCall holds them to. */
export const SESSION_FIELDS = {
  agent: z.string({ error: 'must be a string' }).optional(),
  sessionId: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
  cwd: z
    .string({ error: 'must be a string' })
    .refine((p) => path.isAbsolute(p), { error: (i) => `must be an absolute path, got ${JSON.stringify(i.input)}` })
    .optional(),
  sessionMode: vocabularySchemas().SandboxModeSchema.optional(),
}

const ToolListSchema = z.array(
  z.looseObject(
    {
      name: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
      description: z.string({ error: 'must be a string' }),
      inputSchema: z.looseObject(
        { type: z.literal('object', { error: "must be 'object'" }) },
        { error: 'must be a JSON Schema object' },
      ),
      execute: z.custom<ModelTool['execute']>((v) => typeof v === 'function', { error: 'must be a function' }),
    },
    { error: 'must be a tool ({ name, description, inputSchema, execute })' },
  ),
  { error: 'must be a list of tools (createBashTools(...).tools)' },
)

/** A name given to two tools of `tools` (whatever else is wrong with them): a model could not tell them apart. */
function twiceNamed(tools: unknown): string[] {
  if (!Array.isArray(tools)) return []
  const seen = new Set<unknown>()
  return tools.flatMap((tool: unknown, i) => {
    const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined
    if (typeof name !== 'string') return []
    if (seen.has(name)) return [`tools[${i}].name: ${JSON.stringify(name)} twice`]
    seen.add(name)
    return []
  })
}

/**
 * Checks an adapter's arguments: the tool list, then `options` against `schema` (unknown keys
 * refused); throws one InvalidRequestError listing every problem, each by field.
 */
export function checkAdapterInput<S extends Z.ZodObject>(
  adapter: string,
  tools: unknown,
  options: unknown,
  schema: S,
): Z.output<S> {
  const issues: string[] = []
  const list = ToolListSchema.safeParse(tools)
  if (!list.success) issues.push(...prefixed('tools', list.error))
  issues.push(...twiceNamed(tools))
  const parsed = schema.safeParse(options ?? {})
  if (!parsed.success) issues.push(...prefixed('options', parsed.error))
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: `invalid ${adapter} arguments` })
  return parsed.data as Z.output<S>
}

/** Each issue of `error` as `where: what`, under `root`. */
function prefixed(root: string, error: Z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    const where = [root, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))].join('')
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((k) => `${where}: unknown option ${JSON.stringify(k)}`)
    return [`${where}: ${issue.message}`]
  })
}

/** The tools of one adapter, by name, run with one session's context. */
export interface ToolRunner {
  /** Whether `name` is one of these tools (a harness's own tools are not). */
  owns(name: string): boolean
  /** Runs the model's call of `name`: an unknown name is an error result, never a throw. */
  run(name: string, args: unknown, callId: string, options?: RunOptions): Promise<ToolResult>
}

/** A runner over `tools` (already checked) for one session. */
export function toolRunner(tools: readonly ModelTool[], session: SessionContext): ToolRunner {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  return {
    owns: (name) => byName.has(name),
    async run(name, args, callId, options) {
      const tool = byName.get(name)
      if (!tool) {
        const known = [...byName.keys()].join(', ')
        return toolError(`unknown tool ${JSON.stringify(name)}; the tools are: ${known}`, 'INVALID_ARGUMENTS')
      }
      return tool.execute(args, { ...session, signal: options?.signal, onOutput: options?.onOutput, callId })
    },
  }
}

/** The arguments a model sent as a JSON string, parsed; a bad JSON is the INVALID_ARGUMENTS result the model reads. */
export function argumentsFromJson(text: string): { ok: true; args: unknown } | { ok: false; error: ToolResult } {
  // A function the model calls without arguments may come with an empty string.
  if (text.trim() === '') return { ok: true, args: {} }
  try {
    return { ok: true, args: JSON.parse(text) as unknown }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    return { ok: false, error: toolError(`invalid arguments: not a JSON object (${why})`, 'INVALID_ARGUMENTS') }
  }
}

/** Runs a call whose arguments came as a JSON string. */
export async function runJsonCall(
  runner: ToolRunner,
  call: { name: string; arguments: string; callId: string },
  options?: RunOptions,
): Promise<ToolResult> {
  const parsed = argumentsFromJson(call.arguments)
  if (!parsed.ok) return parsed.error
  return runner.run(call.name, parsed.args, call.callId, options)
}
