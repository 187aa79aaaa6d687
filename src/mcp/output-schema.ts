/**
 * The `outputSchema` of each cordon tool an MCP server serves: the JSON Schema of the
 * `structuredContent` beside its text (src/mcp/output-facts.ts makes it). A client's SDK checks
 * every structured result against it with ajv, so both are made from one zod schema here: the
 * objects are closed, and a fact the schema does not name is a test failure, not a silent extra.
 * `code` is present exactly when the result is an error.
 */
import type { z as Z } from 'zod'
import type { NetworkRefusalReason } from '../policy/network/facts.js'
import { REFUSAL_WORDS } from '../policy/network/refusals.js'
import { onDemand, zod } from '../policy/schema/zod-on-demand.js'
import { SANDBOX_ENFORCEMENTS, SANDBOX_MODES } from '../policy/vocabulary.js'
import { TOOL_ERROR_CODES } from '../tool/tool-error-codes.js'

/** A JSON Schema object as MCP's `Tool.outputSchema` wants it: an object at the root. */
export type ToolOutputSchema = { type: 'object'; [keyword: string]: unknown }

/** The zod schemas of the structured results, built on first use. */
export const outputSchemas = onDemand(() => {
  const { z } = zod()
  const int = z.number().int()
  const reasons = Object.keys(REFUSAL_WORDS) as [NetworkRefusalReason, ...NetworkRefusalReason[]]
  const sandbox = z.strictObject({
    mode: z.enum(SANDBOX_MODES),
    backend: z.string().optional(),
    enforcement: z.enum(SANDBOX_ENFORCEMENTS).optional(),
    denied: z.boolean(),
    deniedFor: z.array(z.enum(['files', 'network'])).optional(),
    deniedPaths: z.array(z.string()).optional(),
    refusedPaths: z.array(z.string()).optional(),
    runnerFailed: z.boolean().optional(),
    networkRefused: z
      .array(z.strictObject({ host: z.string(), port: int, count: int, reason: z.enum(reasons) }))
      .optional(),
    networkRefusedOmitted: int.optional(),
    closedClasses: z.array(z.strictObject({ class: z.string(), evidence: z.string(), remedy: z.string() })).optional(),
  })
  const stream = z.strictObject({ truncated: z.boolean(), spillPath: z.string().optional() })
  const run = z.strictObject({
    exitCode: int.nullable(),
    signal: z.string().nullable(),
    timedOut: z.boolean(),
    aborted: z.boolean(),
    timeoutMs: z.number(),
    stdout: stream,
    stderr: stream,
    sandbox: sandbox.optional(),
  })
  const job = z.strictObject({
    id: z.string(),
    command: z.string(),
    workdir: z.string(),
    callId: z.string(),
    status: z.enum(['running', 'completed', 'killed']),
    exitCode: int.nullable(),
    signal: z.string().nullable(),
    sandbox: sandbox.optional(),
  })
  const code = z.enum(TOOL_ERROR_CODES as [string, ...string[]])
  return {
    sandbox,
    run,
    job,
    /** bash: a foreground run's facts, or the background job it started; `code` on an error. */
    bash: z.strictObject({ code: code.optional(), run: run.optional(), job: job.optional() }),
    /** job_output and job_kill: the job's state after the call; `code` on an error. */
    jobTool: z.strictObject({ code: code.optional(), job: job.optional() }),
  }
})

/** The bash result's structured content. */
export type BashStructured = Z.output<ReturnType<typeof outputSchemas>['bash']>
/** A job tool's structured content. */
export type JobToolStructured = Z.output<ReturnType<typeof outputSchemas>['jobTool']>
/** The sandbox facts of a run or a settled job. */
export type SandboxStructured = Z.output<ReturnType<typeof outputSchemas>['sandbox']>
/** A foreground run's facts. */
export type RunStructured = Z.output<ReturnType<typeof outputSchemas>['run']>
/** A background job's state. */
export type JobStructured = Z.output<ReturnType<typeof outputSchemas>['job']>

/** `schema` as a draft-07 JSON Schema (what the SDK's ajv reads), without `$schema`. */
function jsonSchemaOf(schema: Z.ZodType): ToolOutputSchema {
  const { z } = zod()
  const { $schema: _, ...json } = z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }) as Record<string, unknown>
  if (json.type !== 'object') throw new TypeError('an output schema must be an object')
  return json as ToolOutputSchema
}

/** The output schema of each tool that has one, by tool name (built on first use). */
const byTool = onDemand(
  (): ReadonlyMap<string, { json: ToolOutputSchema; zod: Z.ZodType }> =>
    new Map(
      (
        [
          ['bash', outputSchemas().bash],
          ['job_output', outputSchemas().jobTool],
          ['job_kill', outputSchemas().jobTool],
        ] as const
      ).map(([name, schema]) => [name, { json: jsonSchemaOf(schema), zod: schema }]),
    ),
)

/** The `outputSchema` of tool `name`, or undefined for a tool served with text only. */
export function outputSchemaOf(name: string): ToolOutputSchema | undefined {
  return byTool().get(name)?.json
}

/** The zod schema behind tool `name`'s output schema, or undefined (for checks before sending). */
export function outputValidatorOf(name: string): Z.ZodType | undefined {
  return byTool().get(name)?.zod
}
