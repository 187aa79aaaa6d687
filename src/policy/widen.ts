/**
 * The widening ladder: which modes are strictly wider than which, the escalation targets a
 * model may ask for, the pairing rules for its escalation fields, and the exact texts of
 * every refusal along the way (dsh-semantics §3.2). Pure: no I/O, no approval calls.
 */
import { InvalidRequestError } from './errors.js'
import { HOST_WIDENING_TEXTS, parseAdditionalHosts } from './network/widen-hosts.js'
import { SANDBOX_MODES, isSandboxMode, type SandboxMode } from './vocabulary.js'

/** The modes a model may escalate to (the `sandbox_permissions` enum): fixed, never session-dependent. */
export const ESCALATION_TARGETS = ['workspace-write', 'danger-full-access'] as const

/** A mode a model may ask to escalate to. */
export type EscalationTarget = (typeof ESCALATION_TARGETS)[number]

/** For each mode, the modes strictly wider than it, narrowest first. */
export const WIDER_MODES: Readonly<Record<SandboxMode, readonly SandboxMode[]>> = Object.freeze({
  'read-only': Object.freeze(['workspace-write', 'danger-full-access'] as const),
  'workspace-write': Object.freeze(['danger-full-access'] as const),
  'danger-full-access': Object.freeze([] as const),
})

/** Whether `to` is strictly wider than `from`; false for equal, narrower or unknown modes. */
export function isStrictlyWider(from: string, to: string): boolean {
  return isSandboxMode(from) && isSandboxMode(to) && WIDER_MODES[from].includes(to)
}

/** Whether `value` is one of the ESCALATION_TARGETS. */
export function isEscalationTarget(value: unknown): value is EscalationTarget {
  return typeof value === 'string' && (ESCALATION_TARGETS as readonly string[]).includes(value)
}

/** The outcomes an approval can have: a closed set. */
export const APPROVAL_OUTCOMES = ['allowed-once', 'rejected', 'cancelled', 'unavailable'] as const

/** What the user (or the approval policy) answered. */
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number]

/** The exact texts of the escalation path (dsh-semantics §3.2). */
export const ESCALATION_TEXTS = Object.freeze({
  missingJustification: 'invalid escalation: sandbox_permissions requires a justification',
  justificationWithoutPermissions:
    'invalid escalation: justification is only valid together with sandbox_permissions or additional_hosts',
  blankJustification: 'invalid justification: expected a non-empty sentence',
  notAvailable: 'sandbox_permissions is not available in this composition (no sandboxing executor to escalate)',
  /** The refusal for a request that does not widen the call's effective mode. */
  notStrictlyWider: (target: string, effective: string): string =>
    `sandbox escalation to "${target}" is not strictly wider than this call's current "${effective}" mode`,
  noApprovalService: (target: string): string =>
    `sandbox escalation to "${target}" requires approval, but no approval service is composed`,
  noAgent: (target: string): string =>
    `sandbox escalation to "${target}" requires approval, but the call has no agent to route it through`,
  rejected: (target: string): string => `the user rejected escalating this command to "${target}"`,
  cancelled: (target: string): string => `approval for escalating to "${target}" was cancelled`,
  unavailable: (target: string): string =>
    `sandbox escalation to "${target}" requires approval, but no approval channel is available`,
  /** The reason recorded with the approval request. */
  approvalReason: (target: string, justification: string): string => `escalate sandbox to ${target}: ${justification}`,
})

/** The model's escalation fields, as received (unvalidated). */
export interface EscalationArgs {
  sandbox_permissions?: unknown
  additional_hosts?: unknown
  justification?: unknown
}

/** What a model may ask for one retry: a wider mode, more hosts (normal forms, sorted), or both, and why. */
export interface Escalation {
  mode?: EscalationTarget | undefined
  hosts?: readonly string[] | undefined
  justification: string
}

/** A validated escalation request, or none. */
export type EscalationCheck = { ok: true; escalation: Escalation | undefined } | { ok: false; error: string }

/**
 * Checks the pairing rules: a justification with sandbox_permissions, additional_hosts or both,
 * and neither without it; a non-blank justification, a target from the closed set, and hosts that
 * each parse (every bad one named). Returns the request (or `undefined` when none) or the exact error text.
 */
export function validateEscalationArgs(args: EscalationArgs): EscalationCheck {
  const hasMode = args.sandbox_permissions !== undefined
  const hasHosts = args.additional_hosts !== undefined
  const hasJustification = args.justification !== undefined
  if (!hasMode && !hasHosts && !hasJustification) return { ok: true, escalation: undefined }
  if (hasMode && !hasJustification) return { ok: false, error: ESCALATION_TEXTS.missingJustification }
  if (hasHosts && !hasJustification) return { ok: false, error: HOST_WIDENING_TEXTS.missingJustification }
  if (!hasMode && !hasHosts) return { ok: false, error: ESCALATION_TEXTS.justificationWithoutPermissions }
  if (typeof args.justification !== 'string' || args.justification.trim() === '') {
    return { ok: false, error: ESCALATION_TEXTS.blankJustification }
  }
  if (hasMode && !isEscalationTarget(args.sandbox_permissions)) {
    return {
      ok: false,
      error: `invalid escalation: sandbox_permissions must be one of ${ESCALATION_TARGETS.join(', ')}`,
    }
  }
  const hosts = hasHosts ? hostsOf(args.additional_hosts) : undefined
  if (hosts !== undefined && !hosts.ok) return hosts
  const escalation: Escalation = { justification: args.justification }
  if (hasMode) escalation.mode = args.sandbox_permissions as EscalationTarget
  if (hosts !== undefined) escalation.hosts = hosts.hosts
  return { ok: true, escalation }
}

/** `additional_hosts` as the digest covers them, or why not. */
function hostsOf(value: unknown): ReturnType<typeof parseAdditionalHosts> {
  if (!Array.isArray(value) || !value.every((h) => typeof h === 'string'))
    return { ok: false, error: 'invalid additional_hosts: expected a list of host patterns' }
  return parseAdditionalHosts(value)
}

/** The refusal text when `target` does not strictly widen `effective`, else `undefined` (check before prompting). */
export function wideningError(effective: string, target: string): string | undefined {
  return isStrictlyWider(effective, target) ? undefined : ESCALATION_TEXTS.notStrictlyWider(target, effective)
}

/**
 * Maps an approval outcome to the granted mode or the exact refusal text; throws
 * InvalidRequestError on an outcome outside the closed set (the exhaustiveness backstop).
 */
export function escalationOutcome<T extends string = EscalationTarget>(
  target: T,
  outcome: ApprovalOutcome,
): { granted: true; mode: T } | { granted: false; error: string } {
  switch (outcome) {
    case 'allowed-once':
      return { granted: true, mode: target }
    case 'rejected':
      return { granted: false, error: ESCALATION_TEXTS.rejected(target) }
    case 'cancelled':
      return { granted: false, error: ESCALATION_TEXTS.cancelled(target) }
    case 'unavailable':
      return { granted: false, error: ESCALATION_TEXTS.unavailable(target) }
    default: {
      const unreachable: never = outcome
      throw new InvalidRequestError(
        [
          `outcome: unexpected approval outcome ${JSON.stringify(unreachable)} (expected one of ${APPROVAL_OUTCOMES.join(', ')})`,
        ],
        { context: 'the approval port answered outside its closed set' },
      )
    }
  }
}

/** The narrowest mode strictly wider than `from`, or `undefined` at the top of the ladder. */
export function narrowestWiderMode(from: SandboxMode): SandboxMode | undefined {
  return WIDER_MODES[from][0]
}

// The ladder must agree with the order of SANDBOX_MODES (narrowest first).
for (const [i, mode] of SANDBOX_MODES.entries()) {
  if (WIDER_MODES[mode].join() !== SANDBOX_MODES.slice(i + 1).join())
    throw new Error(`widening ladder out of order at ${mode}`)
}
