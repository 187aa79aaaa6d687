/**
 * The bash tool with its job tools, as one set a harness registers: `bash`, `job_output` and
 * `job_kill` share one jobs port (the harness's, or a fresh InMemoryJobs) and one memory of
 * sandbox failures, so a background job bash starts is read and killed by the other two, and an
 * approval can say which denial a retry follows.
 */
import { bashToolContext, type BashToolOptions } from './bash-tool-options.js'
import { bashToolIn, type BashTool } from './bash-tool.js'
import { jobKillToolIn, jobOutputToolIn, type JobKillTool, type JobOutputTool } from './jobs/tools.js'
import type { Jobs } from './jobs/port.js'
import { refusalsToolIn, type SandboxRefusalsTool } from './refusals-tool.js'

/** One tool set: the three tools, by name and as the list to register, and the jobs port they share. */
export interface BashTools {
  bash: BashTool
  jobOutput: JobOutputTool
  jobKill: JobKillTool
  /** sandbox_refusals: this session's refusals across runs (not in `tools`: register it where the model should see it). */
  refusals: SandboxRefusalsTool
  /** `[bash, job_output, job_kill]`. */
  tools: readonly [BashTool, JobOutputTool, JobKillTool]
  jobs: Jobs
}

/** Builds bash, job_output and job_kill over one executor and one jobs port; options are checked first. */
export function createBashTools(options: BashToolOptions): BashTools {
  const context = bashToolContext(options)
  const bash = bashToolIn(context)
  const jobOutput = jobOutputToolIn(context)
  const jobKill = jobKillToolIn(context)
  const refusals = refusalsToolIn(context)
  return { bash, jobOutput, jobKill, refusals, tools: [bash, jobOutput, jobKill], jobs: context.jobs }
}
