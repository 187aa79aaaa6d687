/**
 * The sandbox_refusals tool: what the sandbox refused across this session's commands (paths,
 * hosts, classes of operations), from the sandbox's refusal log, so a model that lost track of an
 * earlier denial can find it again. It reads only the calling session's (and agent's) runs.
 */
import { displayLine } from '../policy/display-text.js'
import type { LoggedRefusal, RefusalLogEntry } from '../sandbox/refusal-log/entry.js'
import type { RefusalLogRead } from '../sandbox/refusal-log/log.js'
import { MAX_REFUSALS_LISTED, SandboxRefusalsArgumentsSchema } from './arguments.js'
import type { BashToolContext } from './bash-tool-options.js'
import { checkToolCall, parseArguments, toolError, type ModelTool, type ToolResult } from './model-tool.js'
import { modelInputSchema } from './tool-schema.js'

/** What one sandbox_refusals call returns: the text, and the entries it lists. */
export interface SandboxRefusalsResult extends ToolResult {
  /** The entries listed (oldest first), the log's last run number and how many runs it dropped. */
  log?: RefusalLogRead
}

/** The sandbox_refusals tool. */
export type SandboxRefusalsTool = ModelTool<'sandbox_refusals', SandboxRefusalsResult>

const DESCRIPTION = `Lists what the sandbox refused in this session's earlier commands, run by run: each path it refused (a write, or an operation it cannot name), each host the network allow-list refused, and each class of operations the sandbox closes whole. Use it to recall a denial before asking for a wider retry. The last line gives the last run's number: pass it as after_run next time to see only newer runs.`

/** One refusal in a line. */
function refusalLine(r: LoggedRefusal): string {
  if (r.kind === 'path') return `  ${r.operation === 'write' ? 'write refused' : 'refused'}: ${displayLine(r.path)}`
  if (r.kind === 'host')
    return `  connection refused: ${displayLine(r.host)}:${r.port} (${r.reason}${r.count > 1 ? `, ${r.count} times` : ''})`
  return `  ${r.class} closed: ${displayLine(r.evidence)} (opened by ${r.remedy})`
}

/** One entry: its header line, then a line per refusal. */
function entryLines(e: RefusalLogEntry): string[] {
  const how = [e.mode, e.backend, e.background ? 'background job' : undefined, e.failed ? 'failed' : 'exit ignored it']
  const header = `run ${e.run} at ${e.time} (${how.filter(Boolean).join(', ')}): ${displayLine(e.command, 200)}`
  const omitted = e.refusalsOmitted ? [`  ... and ${e.refusalsOmitted} more`] : []
  return [header, ...e.refusals.map(refusalLine), ...omitted]
}

/** The model's text for one read of the log. */
export function renderRefusalLog(read: RefusalLogRead): string {
  const lines = read.entries.length === 0 ? ['(no refusals logged for this session)'] : read.entries.flatMap(entryLines)
  const dropped = read.dropped > 0 ? `; ${read.dropped} older runs with refusals are no longer logged` : ''
  lines.push(`[last run: ${read.lastRun}${dropped}]`)
  return lines.join('\n')
}

/** Builds sandbox_refusals over the tool set's refusal log. */
export function refusalsToolIn(context: BashToolContext): SandboxRefusalsTool {
  return {
    name: 'sandbox_refusals',
    description: DESCRIPTION,
    inputSchema: modelInputSchema(SandboxRefusalsArgumentsSchema),
    argumentsSchema: SandboxRefusalsArgumentsSchema,
    async execute(raw, call) {
      checkToolCall(call)
      const parsed = parseArguments(SandboxRefusalsArgumentsSchema, raw)
      if (!parsed.ok) return parsed.error
      const limit = Math.min(parsed.args.limit ?? MAX_REFUSALS_LISTED, MAX_REFUSALS_LISTED)
      const owner = { sessionId: call.sessionId, agent: call.agent }
      const log = context.refusalLog?.refusals({ owner, afterRun: parsed.args.after_run, limit })
      if (log === undefined)
        return toolError('this executor keeps no refusal log (it does not confine commands)', 'TOOL_FAILED')
      return { content: renderRefusalLog(log), isError: false, log }
    },
  }
}
