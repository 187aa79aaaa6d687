/**
 * What a model reads about a background job (job_output, job_kill): the new output (stderr in
 * its `[stderr]` section), a note when some of it only survives in a spill file, the sandbox
 * markers once the job settled, and last its status line: `[status: running]`,
 * `[status: completed, exit code: N]`, `[status: killed, signal: SIG]` or
 * `[status: killed, killed before exit]` (the reference's outcome details).
 */
import type { SandboxMode } from '../../policy/vocabulary.js'
import { narrowestWiderMode } from '../../policy/widen.js'
import { denialLines, runnerFailureMarker } from '../../shell/exit-status.js'
import type { ShellProcessRead } from '../../shell/types.js'
import type { BashToolContext } from '../bash-tool-options.js'
import type { JobInfo } from './port.js'

/** The body shown when a read brought nothing new. */
export const NO_NEW_OUTPUT = '(no new output)'

/** `[some output was dropped from memory; full output: <paths or (unavailable)>]`. */
export function droppedOutputNote(read: ShellProcessRead): string {
  const paths = [read.stdoutSpillPath, read.stderrSpillPath].filter((p): p is string => p !== undefined)
  return `[some output was dropped from memory; full output: ${paths.length > 0 ? paths.join(', ') : '(unavailable)'}]`
}

/** The job's status line; a kill with no known signal reads `killed before exit`. */
export function jobStatusLine(job: Pick<JobInfo, 'status' | 'exitCode' | 'signal'>): string {
  if (job.status === 'running') return '[status: running]'
  if (job.status === 'killed')
    return `[status: killed, ${job.signal === null ? 'killed before exit' : `signal: ${job.signal}`}]`
  return `[status: completed, exit code: ${job.exitCode ?? 0}]`
}

/** Options of renderJobRead. */
export interface JobRenderOptions {
  /** Append the escalation hint after a file denial marker. */
  escalationHint?: boolean | undefined
  /** Append the hint to ask for hosts after a network denial marker. */
  networkHint?: boolean | undefined
  /** Lines shown just before the status line. */
  notes?: readonly string[] | undefined
}

/** One read of a job as the text a model reads; the status line is always last. */
export function renderJobRead(job: JobInfo, read: ShellProcessRead, options: JobRenderOptions = {}): string {
  const lines: string[] = []
  if (read.lossy) lines.push(droppedOutputNote(read))
  const facts = job.sandbox
  if (facts?.runnerFailed === true) {
    lines.push(runnerFailureMarker(facts.mode))
  } else {
    lines.push(...denialLines(facts, options))
  }
  lines.push(...(options.notes ?? []), jobStatusLine(job))
  const body = read.delta === '' ? NO_NEW_OUTPUT : read.delta
  return `${body}\n${lines.join('\n')}`
}

/** The text of a started background job. */
export function startedJobText(job: JobInfo): string {
  const id = JSON.stringify(job.id)
  return `Started background job ${job.id}.\nRead its output with job_output({"job_id":${id}}); stop it with job_kill({"job_id":${id}}).`
}

/**
 * The hints a denial gets (bash results and job reads alike): the wider mode's when one exists
 * under `mode`, the hosts' when the set confines; either only when approvals can be asked.
 */
export function denialHints(
  context: Pick<BashToolContext, 'approval' | 'executor'>,
  mode: SandboxMode | undefined,
): { escalationHint: boolean; networkHint: boolean } {
  const asks = context.approval !== undefined
  return {
    escalationHint: asks && mode !== undefined && narrowestWiderMode(mode) !== undefined,
    networkHint: asks && context.executor.sandboxMode !== undefined,
  }
}
