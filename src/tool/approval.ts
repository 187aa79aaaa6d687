/**
 * The approval port the bash tool asks before a strictly-wider retry. The harness implements it
 * (a prompt to the user, an approval policy); cordon only routes the question and maps the
 * answer. The request carries what a person needs to judge it: the exact command and workdir,
 * the mode it would run under now and the one asked for, the model's justification, and the
 * sandbox failure this retry follows, if any.
 */
import type { SandboxMode } from '../policy/vocabulary.js'
import type { ApprovalOutcome, EscalationTarget } from '../policy/widen.js'

/** The sandbox failure an escalation follows: a denial (with its paths) or a runner failure. */
export interface PrecedingFailure {
  kind: 'denied' | 'runner-failed'
  /** The call that met it (for a background job: the call that started the job). */
  callId: string
  command: string
  workdir: string
  /** The mode it ran (or failed to run) under. */
  mode: SandboxMode
  /** The paths the sandbox denied, where the backend could name them; empty for a runner failure. */
  paths: readonly string[]
  /** The background job it happened in, when it was one. */
  jobId?: string | undefined
  /** Whether this retry runs exactly that command. */
  sameCommand: boolean
  /** How many bash calls of this session came between it and this retry (0: the one just before). */
  callsSince: number
}

/** One question to the user: escalate this call's sandbox? */
export interface ApprovalRequest {
  /** The agent the call belongs to (approvals are routed per agent). */
  agent: string
  toolName: 'bash'
  /** The id of the retrying call itself: the grant is bound to it and to nothing else. */
  callId: string
  /** `escalate sandbox to <mode>: <justification>` (the reference's audit text). */
  reason: string
  signal?: AbortSignal | undefined
  /** cordon: the exact command that would run under the wider mode. */
  command: string
  /** cordon: the directory it would run in (absolute). */
  workdir: string
  /** cordon: the mode this call runs under without approval (the session's override, else the default). */
  currentMode: SandboxMode
  /** cordon: the mode asked for (strictly wider than `currentMode`). */
  requestedMode: EscalationTarget
  /** cordon: the model's one sentence on why. */
  justification: string
  /** cordon: whether the command would start as a background job. */
  runInBackground: boolean
  /** cordon: the last sandbox failure in this session, absent when there was none. */
  precedingFailure?: PrecedingFailure | undefined
  /** cordon: the calling session, when there is one. */
  sessionId?: string | undefined
}

/** Asks the user; resolves with one of the closed set of outcomes. */
export interface Approval {
  request(request: ApprovalRequest): Promise<ApprovalOutcome>
}

/** The request as text a person can judge at a glance (a harness may show it as its prompt). */
export function describeApprovalRequest(request: ApprovalRequest): string {
  const lines = [
    `Allow this command to run under ${request.requestedMode} instead of ${request.currentMode}?`,
    `  command: ${request.command}`,
    `  in: ${request.workdir}${request.runInBackground ? ' (as a background job)' : ''}`,
    `  why: ${request.justification}`,
  ]
  const failure = request.precedingFailure
  if (failure === undefined) {
    lines.push('  no sandbox denial or runner failure came before it in this session')
  } else {
    const what =
      failure.kind === 'denied'
        ? `the sandbox denied ${failure.paths.length > 0 ? `writing ${failure.paths.join(', ')}` : 'a file operation'}`
        : 'the sandbox runner failed (the command did not run)'
    const when = failure.callsSince === 0 ? 'the previous call' : `a call ${failure.callsSince + 1} calls ago`
    const same = failure.sameCommand ? 'this same command' : `a different command: ${failure.command}`
    lines.push(`  before: ${what} under ${failure.mode}, in ${when} (${same})`)
  }
  return lines.join('\n')
}
