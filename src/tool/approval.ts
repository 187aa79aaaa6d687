/**
 * The approval port the bash tool asks before a strictly-wider retry. The harness implements it
 * (a prompt to the user, an approval policy); cordon only routes the question and maps the answer.
 */
import type { ApprovalOutcome } from '../policy/widen.js'

/** One question to the user: escalate this call's sandbox? */
export interface ApprovalRequest {
  /** The agent the call belongs to (approvals are routed per agent). */
  agent: string
  toolName: 'bash'
  /** The id of the retrying call itself: the grant is bound to it and to nothing else. */
  callId: string
  /** `escalate sandbox to <mode>: <justification>`. */
  reason: string
  signal?: AbortSignal | undefined
}

/** Asks the user; resolves with one of the closed set of outcomes. */
export interface Approval {
  request(request: ApprovalRequest): Promise<ApprovalOutcome>
}
