/**
 * The job tools that sit beside bash (the reference's names): `job_output` reads a background
 * job's new output and status (consuming; lossy reads name the spill files; sandbox denials and
 * runner failures once it settled), `job_kill` stops its whole tree and reports how it ended.
 * Both go through the jobs port, so a job is only ever reached by its owner (session and agent).
 */
import { JobKillArgumentsSchema, JobOutputArgumentsSchema } from '../arguments.js'
import { MAX_JOB_WAIT_MS } from '../../policy/defaults.js'
import type { BashToolContext } from '../bash-tool-options.js'
import { denialHints, renderJobRead } from './render.js'
import type { JobInfo, JobOwner } from './port.js'
import {
  checkToolCall,
  parseArguments,
  toolError,
  type ModelTool,
  type ToolCall,
  type ToolResult,
} from '../model-tool.js'
import { failureOf } from '../sandbox-failure-memory.js'
import { modelInputSchema } from '../tool-schema.js'

export { MAX_JOB_WAIT_MS }

/** What a job tool returns: the model's text, and the job's state after the call. */
export interface JobToolResult extends ToolResult {
  job?: JobInfo
}

/** The job_output tool. */
export type JobOutputTool = ModelTool<'job_output', JobToolResult>
/** The job_kill tool. */
export type JobKillTool = ModelTool<'job_kill', JobToolResult>

const OUTPUT_ARGS = JobOutputArgumentsSchema
const KILL_ARGS = JobKillArgumentsSchema

const OUTPUT_DESCRIPTION = `Reads a background job's output produced since the previous read (each read returns only new output; standard error comes in a [stderr] section), then its status as the last line: [status: running], [status: completed, exit code: N] or [status: killed, ...].
[some output was dropped from memory; full output: <path>] means the rest of the output is only in that file. Sandbox markers appear once the job ended.`
const KILL_DESCRIPTION = `Stops a background job and every process it started (TERM, then KILL after a grace period), waits until it ended, and returns the output not yet read and its final status.`

function ownerOf(call: ToolCall): JobOwner {
  return { sessionId: call.sessionId, agent: call.agent }
}

/** The error for an id the caller does not own (or that never existed), listing the caller's own jobs. */
async function notFound(context: BashToolContext, id: string, owner: JobOwner): Promise<ToolResult> {
  const own = await context.jobs.list(owner)
  const listed =
    own.length === 0
      ? 'this session has no background jobs'
      : `its jobs: ${own.map((j) => `${j.id} (${j.status})`).join(', ')}`
  return toolError(`no background job ${JSON.stringify(id)} in this session; ${listed}`, 'JOB_NOT_FOUND')
}

/** Remembers a settled job's sandbox failure for the approval of a later retry. */
function remember(context: BashToolContext, job: JobInfo, owner: JobOwner): void {
  const failure = failureOf(job.sandbox, {
    callId: job.callId,
    command: job.command,
    workdir: job.workdir,
    jobId: job.id,
  })
  if (failure) context.failures.record(owner, failure)
}

/** Builds job_output over the tool set's jobs port. */
export function jobOutputToolIn(context: BashToolContext): JobOutputTool {
  return {
    name: 'job_output',
    description: OUTPUT_DESCRIPTION,
    inputSchema: modelInputSchema(OUTPUT_ARGS),
    argumentsSchema: OUTPUT_ARGS,
    async execute(raw, call) {
      checkToolCall(call)
      const parsed = parseArguments(OUTPUT_ARGS, raw)
      if (!parsed.ok) return parsed.error
      const owner = ownerOf(call)
      const waitMs = Math.min(parsed.args.wait_ms ?? 0, MAX_JOB_WAIT_MS)
      const out = await context.jobs.output(parsed.args.job_id, owner, { waitMs, signal: call.signal })
      if (out === undefined) return notFound(context, parsed.args.job_id, owner)
      remember(context, out.job, owner)
      const hints = denialHints(context, out.job.sandbox?.mode)
      return { content: renderJobRead(out.job, out.read, hints), isError: false, job: out.job }
    },
  }
}

/** Builds job_kill over the tool set's jobs port. */
export function jobKillToolIn(context: BashToolContext): JobKillTool {
  return {
    name: 'job_kill',
    description: KILL_DESCRIPTION,
    inputSchema: modelInputSchema(KILL_ARGS),
    argumentsSchema: KILL_ARGS,
    async execute(raw, call) {
      checkToolCall(call)
      const parsed = parseArguments(KILL_ARGS, raw)
      if (!parsed.ok) return parsed.error
      const owner = ownerOf(call)
      const killed = await context.jobs.kill(parsed.args.job_id, owner)
      if (killed === undefined) return notFound(context, parsed.args.job_id, owner)
      remember(context, killed.job, owner)
      const notes = killed.killed ? [] : [`[job ${killed.job.id} had already ended; nothing was killed]`]
      const hints = denialHints(context, killed.job.sandbox?.mode)
      return {
        content: renderJobRead(killed.job, killed.read, { ...hints, notes }),
        isError: false,
        job: killed.job,
      }
    },
  }
}
