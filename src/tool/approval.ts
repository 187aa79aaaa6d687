/**
 * The approval port the bash tool asks before a strictly-wider retry. The harness implements it
 * (a prompt to the user, an approval policy); cordon only routes the question and maps the
 * answer. The request carries what a person needs to judge it: the exact command and workdir,
 * the mode it would run under now and the one asked for, the model's justification, and the
 * sandbox failure this retry follows, if any. Those raw fields come from the model, so a person
 * is shown `display`: the same text with every control, bidi and invisible character escaped
 * (src/policy/display-text.ts). The workdir is the real directory the command runs in (symlinks
 * resolved), and the prompt says when it lies outside the workspace root. The request's `digest`
 * covers the exact command, workdir, policy, background and timeout of the retry, and the retry
 * runs only when the answer names it: what runs is what was shown.
 */
import { createHash } from 'node:crypto'
import { isAbsolute, relative, sep } from 'node:path'
import { displayBlock, displayLine } from '../policy/display-text.js'
import { zod } from '../policy/schema/zod-on-demand.js'
import type { SandboxExecutionPolicy, SandboxMode } from '../policy/vocabulary.js'
import { APPROVAL_OUTCOMES, type ApprovalOutcome, type EscalationTarget } from '../policy/widen.js'

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
  /**
   * `escalate sandbox to <mode>: <justification>` (the reference's audit text), the justification
   * escaped as `display.justification` is: a harness may show it as it is. The raw text is `justification`.
   */
  reason: string
  signal?: AbortSignal | undefined
  /** cordon: the exact command that would run under the wider mode. */
  command: string
  /** cordon: the directory it would run in: absolute, every symlink resolved (the command runs there). */
  workdir: string
  /** cordon: the workdir as the call gave it (made absolute), when resolving symlinks changed it. */
  givenWorkdir?: string | undefined
  /** cordon: the call's workspace root (absolute, symlinks resolved). */
  workspaceRoot?: string | undefined
  /** cordon: the mode this call runs under without approval (the session's override, else the default). */
  currentMode: SandboxMode
  /** cordon: the mode asked for (strictly wider than `currentMode`). */
  requestedMode: EscalationTarget
  /** cordon: the model's one sentence on why. */
  justification: string
  /** cordon: whether the command would start as a background job. */
  runInBackground: boolean
  /** cordon: the timeout a foreground command would run under, in ms (capped); absent for a background job. */
  timeoutMs?: number | undefined
  /** cordon: the last sandbox failure in this session, absent when there was none. */
  precedingFailure?: PrecedingFailure | undefined
  /** cordon: the calling session, when there is one. */
  sessionId?: string | undefined
  /** cordon: the policy the retry would run under (its mode is `requestedMode`). */
  policy: SandboxExecutionPolicy
  /** cordon: sha256 (hex) of the exact command, workdir, policy, background and timeout (approvalDigest); the answer must name it. */
  digest: string
  /** cordon: the fields above as a person may be shown them (escaped, bounded). */
  display: ApprovalDisplay
}

/** What of a request a person reads: each model-given string escaped and bounded (display-text.ts). */
export interface ApprovalDisplay {
  /** One line, or a quoted block headed by its line count. */
  command: string
  workdir: string
  /** The workdir as given, when it resolves elsewhere through a symlink. */
  givenWorkdir?: string | undefined
  /** The workspace root, when the workdir lies outside it. */
  outsideRoot?: string | undefined
  justification: string
  /** The preceding denial's paths, each on one line. */
  deniedPaths: string[]
  /** The preceding failure's command when it was another one (one line). */
  precedingCommand?: string | undefined
}

/** An answer that approves exactly one request: its outcome and the digest of the request shown. */
export interface ApprovalAnswer {
  outcome: ApprovalOutcome
  /** The `digest` of the request the person saw; required for `allowed-once`. */
  digest?: string | undefined
}

/**
 * Asks the user. An `allowed-once` must come as `{ outcome, digest: request.digest }`: a bare
 * outcome still rejects, cancels or reports no channel, but never allows (fail closed).
 */
export interface Approval {
  request(request: ApprovalRequest): Promise<ApprovalOutcome | ApprovalAnswer>
}

/**
 * What a digest covers: the exact command, the directory it runs in, the policy it runs under,
 * whether it starts as a background job, and a foreground command's timeout.
 */
export interface ApprovalSubject {
  command: string
  workdir: string
  policy: SandboxExecutionPolicy | undefined
  /** Absent: false. */
  runInBackground?: boolean | undefined
  /** A foreground command's timeout in ms; absent for a background job (none applies). */
  timeoutMs?: number | undefined
}

/** `value` with object keys sorted at every depth and undefined members dropped (one JSON text per value). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, canonical(v)]))
}

/** sha256 (hex) over a canonical encoding of `subject`: one changed byte of any field changes it. */
export function approvalDigest(subject: ApprovalSubject): string {
  const encoded = JSON.stringify([
    'cordon-approval-v2',
    subject.command,
    subject.workdir,
    canonical(subject.policy),
    subject.runInBackground === true,
    subject.timeoutMs ?? null,
  ])
  return createHash('sha256').update(encoded, 'utf8').digest('hex')
}

/** Whether absolute `dir` lies outside absolute `root` (both with symlinks resolved). */
export function outsideRoot(dir: string, root: string): boolean {
  const rel = relative(root, dir)
  return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)
}

/** The display fields of a request: every model-given string escaped and bounded. */
export function approvalDisplay(
  request: Pick<
    ApprovalRequest,
    'command' | 'workdir' | 'givenWorkdir' | 'workspaceRoot' | 'justification' | 'precedingFailure'
  >,
): ApprovalDisplay {
  const failure = request.precedingFailure
  const root = request.workspaceRoot
  const given = request.givenWorkdir
  return {
    command: displayBlock(request.command),
    workdir: displayLine(request.workdir),
    givenWorkdir: given !== undefined && given !== request.workdir ? displayLine(given) : undefined,
    outsideRoot: root !== undefined && outsideRoot(request.workdir, root) ? displayLine(root) : undefined,
    justification: displayLine(request.justification),
    deniedPaths: (failure?.paths ?? []).map((p) => displayLine(p)),
    precedingCommand: failure && !failure.sameCommand ? displayLine(failure.command) : undefined,
  }
}

/** The refusal texts of an answer that does not approve the request shown. */
export const APPROVAL_ANSWER_TEXTS = Object.freeze({
  noDigest:
    'the approval answered allowed-once without naming the request\'s digest; nothing ran (answer { outcome: "allowed-once", digest: request.digest })',
  otherDigest:
    'the approval named the digest of another request: the command, workdir, policy, background or timeout differ from what was shown; nothing ran',
  malformed: (issues: string): string => `the approval's answer is malformed (${issues}); nothing ran`,
})

/**
 * The outcome an answer stands for, given the digest of what would run: `allowed-once` only when
 * the answer names exactly that digest; a malformed answer or another digest refuses (`error`).
 */
export function answerOutcome(answer: unknown, digest: string): { outcome: ApprovalOutcome } | { error: string } {
  const { z } = zod()
  const parsed = z
    .union([
      z.enum(APPROVAL_OUTCOMES),
      z.strictObject({ outcome: z.enum(APPROVAL_OUTCOMES), digest: z.string().optional() }),
    ])
    .safeParse(answer)
  if (!parsed.success) {
    return { error: APPROVAL_ANSWER_TEXTS.malformed(parsed.error.issues.map((i) => i.message).join('; ')) }
  }
  const given = typeof parsed.data === 'string' ? { outcome: parsed.data } : parsed.data
  if (given.outcome !== 'allowed-once') return { outcome: given.outcome }
  if (!('digest' in given) || given.digest === undefined) return { error: APPROVAL_ANSWER_TEXTS.noDigest }
  return given.digest === digest ? { outcome: 'allowed-once' } : { error: APPROVAL_ANSWER_TEXTS.otherDigest }
}

/** The lines that warn about the workdir: reached through a symlink, outside the workspace root. */
function workdirNotes(shown: ApprovalDisplay): string[] {
  const notes: string[] = []
  if (shown.givenWorkdir !== undefined) notes.push(`  given as: ${shown.givenWorkdir} (a symlink leads there)`)
  if (shown.outsideRoot !== undefined) notes.push(`  outside the workspace root (${shown.outsideRoot})`)
  return notes
}

/** The request as text a person can judge at a glance (a harness may show it as its prompt); only `display` text. */
export function describeApprovalRequest(request: ApprovalRequest): string {
  const shown = approvalDisplay(request)
  const command = shown.command.includes('\n')
    ? `  command ${shown.command.replace(/\n/g, '\n    ')}`
    : `  command: ${shown.command}`
  const lines = [
    `Allow this command to run under ${request.requestedMode} instead of ${request.currentMode}?`,
    command,
    `  in: ${shown.workdir}${request.runInBackground ? ' (as a background job)' : ''}${request.timeoutMs === undefined ? '' : ` (timeout ${request.timeoutMs}ms)`}`,
    ...workdirNotes(shown),
    `  why: ${shown.justification}`,
  ]
  const failure = request.precedingFailure
  if (failure === undefined) {
    lines.push('  no sandbox denial or runner failure came before it in this session')
  } else {
    const paths = shown.deniedPaths
    const what =
      failure.kind === 'denied'
        ? `the sandbox denied ${paths.length > 0 ? `writing ${paths.join(', ')}` : 'a file operation'}`
        : 'the sandbox runner failed (the command did not run)'
    const when = failure.callsSince === 0 ? 'the previous call' : `a call ${failure.callsSince + 1} calls ago`
    const same = failure.sameCommand ? 'this same command' : `a different command: ${shown.precedingCommand}`
    lines.push(`  before: ${what} under ${failure.mode}, in ${when} (${same})`)
  }
  lines.push(`  digest: ${request.digest}`)
  return lines.join('\n')
}
