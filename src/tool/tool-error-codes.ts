/**
 * The closed set of codes a tool result carries when `isError`: a harness can switch on them
 * exhaustively. Each names who must act: the model (arguments, escalation), the user (a refused
 * approval), the host (the sandbox, the jobs runtime) or nobody (an abort).
 */

/** Every code the bash tool returns. */
export const BASH_TOOL_ERROR_CODES = [
  /** The call's signal aborted (before or during the run). */
  'TOOL_ABORTED',
  /** No backend can enforce the mode (or the runner failed to confine): nothing ran. */
  'SANDBOX_UNAVAILABLE',
  /** The command could not be started (`spawn failed: <stage>: <errno>`). */
  'SPAWN_FAILED',
  /** The resolved request was malformed (a bad workdir or root, a bad timeout). */
  'INVALID_REQUEST',
  /** Anything else that went wrong in the engine. */
  'TOOL_FAILED',
  /** The jobs runtime refused a background job (nothing keeps running). */
  'JOBS_FAILED',
  /** The model's arguments do not match the schema. */
  'INVALID_ARGUMENTS',
  /** The escalation fields break their pairing rules, or escalation is not offered here. */
  'INVALID_ESCALATION',
  /** The requested mode is not strictly wider than the call's current one. */
  'ESCALATION_NOT_WIDER',
  /** No approval service or no agent to route the approval through. */
  'ESCALATION_UNAVAILABLE',
  /** The user rejected or cancelled the approval, no channel could ask, or the answer did not name the digest of what would run. */
  'ESCALATION_REFUSED',
] as const

/** A code the bash tool returns. */
export type BashToolErrorCode = (typeof BASH_TOOL_ERROR_CODES)[number]

/** Every code the job tools (job_output, job_kill) return beyond the shared ones. */
export const JOB_TOOL_ERROR_CODES = [
  /** No job with that id belongs to the calling session and agent. */
  'JOB_NOT_FOUND',
] as const

/** A code any cordon tool returns. */
export type ToolErrorCode = BashToolErrorCode | (typeof JOB_TOOL_ERROR_CODES)[number]

/** Every code any cordon tool returns. */
export const TOOL_ERROR_CODES: readonly ToolErrorCode[] = [...BASH_TOOL_ERROR_CODES, ...JOB_TOOL_ERROR_CODES]
