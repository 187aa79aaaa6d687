/**
 * The approval port the bash tool asks before a strictly-wider retry. The harness implements it
 * (a prompt to the user, an approval policy); cordon only routes the question and maps the
 * answer. The request carries what a person needs to judge it: the exact command and workdir,
 * the mode it would run under now and the one asked for, the hosts asked for (`additional_hosts`,
 * each said to have been refused in the previous run when it was), the model's justification,
 * and the sandbox failure this retry follows, if any. Those raw fields come from the model, so a person
 * is shown `display`: the same text with every control, bidi and invisible character escaped
 * (src/policy/display-text.ts). The workdir is the real directory the command runs in (symlinks
 * resolved), and the prompt says when it lies outside the workspace root. The request's `digest`
 * covers the exact command, workdir, policy, hosts, background and timeout of the retry, and the retry
 * runs only when the answer names it: what runs is what was shown.
 */
import { DEFAULT_NETWORK_POLICY } from '../policy/defaults.js'
import { createHash } from 'node:crypto'
import { isAbsolute, relative, sep } from 'node:path'
import { displayBlock, displayLine } from '../policy/display-text.js'
import { canonicalPath } from '../policy/resolve.js'
import { zod } from '../policy/schema/zod-on-demand.js'
import { destinationText } from '../policy/network/refusals.js'
import type { Refusal } from '../policy/network/refusals.js'
import { refusedBefore } from '../policy/network/widen-hosts.js'
import type { NetworkPolicy, SandboxExecutionPolicy, SandboxMode } from '../policy/vocabulary.js'
import { APPROVAL_OUTCOMES, type ApprovalOutcome } from '../policy/widen.js'
import type { ShellExecSpec } from '../shell/types.js'

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
  /** The destinations a network allow-list's proxy refused in that run, when it was denied for them. */
  refused?: readonly Refusal[] | undefined
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
  /** cordon: the mode the retry would run under: the one asked for (strictly wider), else `currentMode` when only hosts are asked. */
  requestedMode: SandboxMode
  /** cordon: the hosts asked for (`additional_hosts`): normal forms, sorted, each once; absent when none. */
  additionalHosts?: readonly string[] | undefined
  /** cordon: the network this call runs under without approval (`policy.network` is the widened one). */
  currentNetwork?: NetworkPolicy | undefined
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
  /** cordon: sha256 (hex) of the exact command, workdir, policy, background, timeout and hosts (approvalDigest); the answer must name it. */
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
  /** Each host asked for, escaped, `(refused in the previous run)` after one the call just before was refused. */
  hosts: string[]
  /** The preceding denial's refused destinations (host:port, escaped). */
  refusedDestinations: string[]
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
 * whether it starts as a background job, a foreground command's timeout, and the hosts asked for.
 */
export interface ApprovalSubject {
  command: string
  workdir: string
  policy: SandboxExecutionPolicy | undefined
  /** Absent: false. */
  runInBackground?: boolean | undefined
  /** A foreground command's timeout in ms; absent for a background job (none applies). */
  timeoutMs?: number | undefined
  /** The hosts asked for (`additional_hosts`); sorted and deduplicated here, so their order never matters. */
  additionalHosts?: readonly string[] | undefined
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
    'cordon-approval-v3',
    subject.command,
    subject.workdir,
    canonical(subject.policy),
    subject.runInBackground === true,
    subject.timeoutMs ?? null,
    [...new Set(subject.additionalHosts ?? [])].sort(),
  ])
  return createHash('sha256').update(encoded, 'utf8').digest('hex')
}

/**
 * The approval digest of what `spec` runs (a background job has no timeout). Its workdir is
 * resolved again: a symlink planted there while the person was asked leads elsewhere, and refuses.
 */
export function approvalDigestOfRun(
  spec: ShellExecSpec,
  background: boolean,
  hosts: readonly string[] | undefined,
): string {
  return approvalDigest({
    ...spec,
    workdir: canonicalPath(spec.workdir),
    policy: spec.sandboxPolicy,
    runInBackground: background,
    timeoutMs: background ? undefined : spec.timeoutMs,
    additionalHosts: hosts,
  })
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
    'command' | 'workdir' | 'givenWorkdir' | 'workspaceRoot' | 'justification' | 'precedingFailure' | 'additionalHosts'
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
    hosts: hostLines(request.additionalHosts ?? [], failure),
    refusedDestinations: (failure?.refused ?? []).map((r) => destinationText(r.host, r.port)),
  }
}

/** Each host asked for, escaped; one that covers a destination the call just before was refused says so. */
function hostLines(hosts: readonly string[], failure: PrecedingFailure | undefined): string[] {
  const refused = failure?.callsSince === 0 ? (failure.refused ?? []) : []
  return hosts.map((h) => `${displayLine(h)}${refusedBefore(h, refused) ? ' (refused in the previous run)' : ''}`)
}

/** The refusal texts of an answer that does not approve the request shown. */
export const APPROVAL_ANSWER_TEXTS = Object.freeze({
  noDigest:
    'the approval answered allowed-once without naming the request\'s digest; nothing ran (answer { outcome: "allowed-once", digest: request.digest })',
  otherDigest:
    'the approval named the digest of another request: the command, workdir, policy, hosts, background or timeout differ from what was shown; nothing ran',
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

/** What the preceding failure was: the paths denied, the destinations refused, or the runner's failure. */
function failureWhat(failure: PrecedingFailure, shown: ApprovalDisplay): string {
  if (failure.kind !== 'denied') return 'the sandbox runner failed (the command did not run)'
  const parts: string[] = []
  if (shown.deniedPaths.length > 0) parts.push(`the sandbox denied writing ${shown.deniedPaths.join(', ')}`)
  if (shown.refusedDestinations.length > 0)
    parts.push(`the network allow-list refused ${shown.refusedDestinations.join(', ')}`)
  return parts.length > 0 ? parts.join(' and ') : 'the sandbox denied a file operation'
}

/** The network a call runs under, in one line (every host escaped). */
export function networkText(network: NetworkPolicy | undefined): string {
  if (network === undefined || typeof network === 'string') return network ?? DEFAULT_NETWORK_POLICY
  const deny = network.deny?.length ? `; deny ${network.deny.map((h) => displayLine(h)).join(', ')}` : ''
  return `allow-list ${network.allow.map((h) => displayLine(h)).join(', ')}${deny}`
}

/** The first line: the wider mode, the hosts, or both. */
function questionLine(request: ApprovalRequest): string {
  const wider = request.requestedMode !== request.currentMode
  const hosts = (request.additionalHosts ?? []).length > 0
  if (!hosts) return `Allow this command to run under ${request.requestedMode} instead of ${request.currentMode}?`
  if (!wider) return `Allow this command to reach more hosts (under ${request.currentMode})?`
  return `Allow this command to run under ${request.requestedMode} instead of ${request.currentMode}, and to reach more hosts?`
}

/** The request as text a person can judge at a glance (a harness may show it as its prompt); only `display` text. */
export function describeApprovalRequest(request: ApprovalRequest): string {
  const shown = approvalDisplay(request)
  const command = shown.command.includes('\n')
    ? `  command ${shown.command.replace(/\n/g, '\n    ')}`
    : `  command: ${shown.command}`
  const lines = [
    questionLine(request),
    command,
    `  in: ${shown.workdir}${request.runInBackground ? ' (as a background job)' : ''}${request.timeoutMs === undefined ? '' : ` (timeout ${request.timeoutMs}ms)`}`,
    ...workdirNotes(shown),
    ...shown.hosts.map((h) => `  reach: ${h}`),
    ...(shown.hosts.length > 0 ? [`  network now: ${networkText(request.currentNetwork)}`] : []),
    `  why: ${shown.justification}`,
  ]
  const failure = request.precedingFailure
  if (failure === undefined) {
    lines.push('  no sandbox denial or runner failure came before it in this session')
  } else {
    const when = failure.callsSince === 0 ? 'the previous call' : `a call ${failure.callsSince + 1} calls ago`
    const same = failure.sameCommand ? 'this same command' : `a different command: ${shown.precedingCommand}`
    lines.push(`  before: ${failureWhat(failure, shown)} under ${failure.mode}, in ${when} (${same})`)
  }
  lines.push(`  digest: ${request.digest}`)
  return lines.join('\n')
}
