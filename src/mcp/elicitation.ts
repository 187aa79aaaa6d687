/**
 * The approval port (src/tool/approval.ts) over MCP elicitation: the strictly-wider retry is put
 * to the person through the client, as a form with one choice, sent as part of the tools/call
 * it belongs to (relatedRequestId). The message is describeApprovalRequest's text: every
 * model-given string escaped, the digest included. Only "allow once" allows, and the answer names
 * the request's digest, so the tool runs exactly what was shown. Decline rejects, cancel
 * cancels. A malformed answer, a transport error, a timeout or a client that cannot ask refuses,
 * and the reason is kept for the call's text (`takeReason`).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { displayLine } from '../policy/display-text.js'
import type { ApprovalOutcome } from '../policy/widen.js'
import { type Approval, type ApprovalAnswer, type ApprovalRequest, describeApprovalRequest } from '../tool/approval.js'

/** The form's one field. */
export const APPROVAL_FIELD = 'decision'
/** The value that allows the retry, once, exactly as shown. */
export const ALLOW_ONCE = 'allow-once'
/** The value that rejects it. */
export const REJECT = 'reject'

/** The schema the client renders: one required choice. */
export const APPROVAL_FORM = Object.freeze({
  type: 'object' as const,
  properties: {
    [APPROVAL_FIELD]: {
      type: 'string' as const,
      title: 'Run this command with the wider sandbox?',
      description: `${ALLOW_ONCE}: run it once as shown; ${REJECT}: do not run it`,
      enum: [ALLOW_ONCE, REJECT],
    },
  },
  required: [APPROVAL_FIELD],
})

/** Why an approval could not be asked or answered, in the call's text. */
export const REFUSAL_REASONS = Object.freeze({
  noElicitation:
    'this MCP client did not declare the elicitation capability (form mode), so no person can be asked; nothing ran',
  notInFlight: 'the call asking for approval is no longer running; nothing ran',
  failed: (why: string): string => `asking the person through the MCP client failed (${displayLine(why)}); nothing ran`,
  malformed: (what: string): string =>
    `the MCP client answered the approval with ${displayLine(what)}, not one of ${ALLOW_ONCE} or ${REJECT}; nothing ran`,
})

/** What the approval needs of the SDK server: the client's capabilities and elicitation. */
export type ElicitingServer = Pick<Server, 'getClientCapabilities' | 'elicitInput'>

/**
 * Whether the client declared form elicitation: `elicitation.form`, or an elicitation capability
 * that names no mode (`{}`: form, as SDKs before the URL mode read it), not URL mode alone.
 */
export function canElicit(server: Pick<Server, 'getClientCapabilities'>): boolean {
  const declared = server.getClientCapabilities()?.elicitation
  return declared !== undefined && (declared.form !== undefined || declared.url === undefined)
}

/** An Approval that asks through elicitation, one connection's calls at a time. */
export class ElicitationApproval implements Approval {
  readonly #reasons = new Map<string, string>()

  constructor(
    private readonly server: ElicitingServer,
    /** The JSON-RPC id of the tools/call behind a call id, while it runs. */
    private readonly requestIdOf: (callId: string) => RequestId | undefined,
    private readonly timeoutMs: number,
  ) {}

  /** Asks the person; an outcome the tool maps, or `unavailable` with the reason kept for `takeReason`. */
  async request(request: ApprovalRequest): Promise<ApprovalOutcome | ApprovalAnswer> {
    const requestId = this.requestIdOf(request.callId)
    if (requestId === undefined) return this.#refuse(request.callId, REFUSAL_REASONS.notInFlight)
    if (!canElicit(this.server)) return this.#refuse(request.callId, REFUSAL_REASONS.noElicitation)
    let answer: Awaited<ReturnType<ElicitingServer['elicitInput']>>
    try {
      answer = await this.server.elicitInput(
        { message: describeApprovalRequest(request), requestedSchema: APPROVAL_FORM },
        { relatedRequestId: requestId, signal: request.signal, timeout: this.timeoutMs },
      )
    } catch (error) {
      // A cancelled call says so itself (the tool sees its signal); anything else refuses, with why.
      if (request.signal?.aborted) return 'cancelled'
      return this.#refuse(
        request.callId,
        REFUSAL_REASONS.failed(error instanceof Error ? error.message : String(error)),
      )
    }
    if (answer.action === 'decline') return 'rejected'
    if (answer.action === 'cancel') return 'cancelled'
    const decision = answer.content?.[APPROVAL_FIELD]
    if (decision === ALLOW_ONCE) return { outcome: 'allowed-once', digest: request.digest }
    if (decision === REJECT) return 'rejected'
    return this.#refuse(request.callId, REFUSAL_REASONS.malformed(JSON.stringify(answer.content ?? null)))
  }

  /** The reason the approval of call `callId` was refused, once (then forgotten). */
  takeReason(callId: string): string | undefined {
    const reason = this.#reasons.get(callId)
    this.#reasons.delete(callId)
    return reason
  }

  #refuse(callId: string, reason: string): ApprovalOutcome {
    this.#reasons.set(callId, reason)
    return 'unavailable'
  }
}
