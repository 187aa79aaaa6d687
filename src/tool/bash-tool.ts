/**
 * The model-facing bash tool: zod-validated arguments; execution through a shell executor, in
 * the foreground (rendered with exit markers) or as a background job handed to the jobs port;
 * and the one strictly-wider retry the user approves. What the model sends is untrusted: it
 * chooses a command, a workdir, a timeout, the background and an escalation, never env, stdin
 * or an output budget. What the harness sends with the call (the session's cwd and mode, the
 * ids) decides the workspace root and the baseline mode, so one instance serves many sessions.
 */
import { isAbsolute, resolve as resolvePath } from 'node:path'
import { displayLine } from '../policy/display-text.js'
import { isAbortedError, isInvalidRequestError, isSandboxUnavailableError, isSpawnError } from '../policy/errors.js'
import { canonicalPath, resolvePolicy } from '../policy/resolve.js'
import { hostsRequestLabel, widenNetwork } from '../policy/network/widen-hosts.js'
import type { NetworkPolicy, SandboxExecutionPolicy, SandboxMode } from '../policy/vocabulary.js'
import {
  ESCALATION_TEXTS,
  type EscalationTarget,
  escalationOutcome,
  narrowestWiderMode,
  validateEscalationArgs,
  wideningError,
} from '../policy/widen.js'
import { renderResult } from '../shell/exit-status.js'
import { spawnFailureText } from '../shell/spawn-failure.js'
import type { ShellExecSpec, ShellProcess, ShellRunResult, ToolExecution } from '../shell/types.js'
import {
  APPROVAL_ANSWER_TEXTS,
  answerOutcome,
  approvalDigest,
  approvalDigestOfRun,
  approvalDisplay,
} from './approval.js'
import { BashArgumentsSchema, BashArgumentsUnsandboxedSchema } from './arguments.js'
import { bashToolContext, type BashToolContext, type BashToolOptions, configFieldsFor } from './bash-tool-options.js'
import { denialHints, startedJobText } from './jobs/render.js'
import type { JobInfo, JobOwner } from './jobs/port.js'
import {
  checkToolCall,
  parseArguments,
  toolError,
  type ModelTool,
  type ToolCall,
  type ToolResult,
} from './model-tool.js'
import { failureOf } from './sandbox-failure-memory.js'
import type { BashToolErrorCode } from './tool-error-codes.js'
import { modelInputSchema } from './tool-schema.js'

export type { BashToolOptions } from './bash-tool-options.js'

/** The call context of the bash tool (the same for the job tools). */
export type BashToolCall = ToolCall

/** What one bash invocation returns: the model's text, and the facts behind it. */
export interface BashToolResult extends ToolResult {
  /** A stable code when `isError`: one of BASH_TOOL_ERROR_CODES. */
  code?: BashToolErrorCode
  /** A foreground run's facts. */
  result?: ShellRunResult
  /** The background job a `run_in_background` call started. */
  job?: JobInfo
}

/** The bash tool as a harness registers it. */
export type BashTool = ModelTool<'bash', BashToolResult>

const DESCRIPTION = `Runs a bash command (bash -c, a fresh non-interactive shell each call) and returns its output with status markers.
Check the [exit code: N] marker on every result; investigate failures before moving on. Other markers: [timed out after Nms], [killed by signal: SIG], (no output), and a [stderr] section for standard error.
A foreground command owns its process tree: anything it starts with & is killed shortly after it returns, so never use & or nohup to keep something running. For servers, watchers and long builds set run_in_background: the call returns a job id at once; job_output reads the job's new output and its status, job_kill stops it.`
const SANDBOX_DESCRIPTION = `
Commands run in a sandbox. [sandbox: file access denied under <mode> mode] means the sandbox, not the command, refused a file operation (for a background job it shows in job_output). Only then, retry the exact same command once with sandbox_permissions (the narrowest wider mode that suffices) and a one-sentence justification; the user is asked to approve. Never escalate speculatively. A rejection is final. Escalation is unavailable when approvals are disabled.
[sandbox: network access refused ...] means the network allow-list refused the hosts it names. Only then, retry the exact same command once with additional_hosts (only the hosts it needs) and a one-sentence justification; the user is asked to approve.`

/** Whether a denial under `mode` gets the escalation hint: a wider mode exists and approvals can be asked. */
export function offersEscalation(context: Pick<BashToolContext, 'approval'>, mode: SandboxMode | undefined): boolean {
  return mode !== undefined && narrowestWiderMode(mode) !== undefined && context.approval !== undefined
}

/** The model's text for a command that did not run or could not finish, by what went wrong. */
function failureResult(error: unknown, call: ToolCall): BashToolResult {
  if (call.signal?.aborted || isAbortedError(error)) return toolError('tool call aborted', 'TOOL_ABORTED')
  const message = error instanceof Error ? error.message : String(error)
  if (isSandboxUnavailableError(error)) return toolError(message, 'SANDBOX_UNAVAILABLE')
  if (isSpawnError(error)) return toolError(spawnFailureText(error), 'SPAWN_FAILED')
  if (isInvalidRequestError(error)) return toolError(message, 'INVALID_REQUEST')
  return toolError(message, 'TOOL_FAILED')
}

/** A retry the person approved: the policy it runs under, the hosts asked for and the digest their answer named. */
interface ApprovedRetry {
  policy: SandboxExecutionPolicy
  hosts: readonly string[] | undefined
  digest: string
}

/** Where a retry would run: its real directory (and as given), the call's workspace root and its mode without approval. */
interface RetryPlace {
  workdir: string
  givenWorkdir: string
  root: string
  currentMode: SandboxMode
}

/** What the model asks to retry: the mode, the hosts (or both), why, the command, background or not, and its timeout. */
interface RetryAsk {
  mode?: EscalationTarget | undefined
  hosts?: readonly string[] | undefined
  justification: string
  command: string
  background: boolean
  timeoutMs: number | null | undefined
}

/** The policy a retry would run under and its timeout as the executor caps it (none for a background job). */
function retryTerms(
  context: BashToolContext,
  ask: RetryAsk,
  call: ToolCall,
  place: RetryPlace,
  network: NetworkPolicy | undefined,
): { policy: SandboxExecutionPolicy; timeoutMs: number | undefined } {
  const policy = resolvePolicy({
    ...configFieldsFor(context, place.root),
    cwd: place.workdir,
    workspaceRoot: place.root,
    defaultMode: context.defaultMode,
    sessionMode: call.sessionMode,
    approvedMode: ask.mode,
    sessionId: call.sessionId,
    network,
  })
  const request = { command: ask.command, workdir: place.workdir, timeoutMs: ask.timeoutMs ?? undefined }
  return { policy, timeoutMs: ask.background ? undefined : context.executor.resolve(request).timeoutMs }
}

/**
 * Asks the approval port about one strictly-wider retry and checks the answer: the retry's policy
 * and digest when it allows exactly the request shown, else the tool error to return.
 */
async function approveRetry(
  context: BashToolContext,
  ask: RetryAsk,
  call: ToolCall,
  place: RetryPlace,
): Promise<ApprovedRetry | BashToolResult> {
  const { approval, failures } = context
  const notWider = ask.mode === undefined ? undefined : wideningError(place.currentMode, ask.mode)
  if (notWider) return toolError(notWider, 'ESCALATION_NOT_WIDER')
  const widened =
    ask.hosts === undefined ? undefined : widenNetwork(context.network, ask.hosts, ask.mode ?? place.currentMode)
  if (widened?.ok === false) return toolError(widened.error, 'ESCALATION_NOT_WIDER')
  const target =
    ask.hosts === undefined
      ? (ask.mode as EscalationTarget)
      : hostsRequestLabel(ask.mode ?? place.currentMode, ask.hosts)
  if (!approval) return toolError(ESCALATION_TEXTS.noApprovalService(target), 'ESCALATION_UNAVAILABLE')
  if (call.agent === undefined) return toolError(ESCALATION_TEXTS.noAgent(target), 'ESCALATION_UNAVAILABLE')
  let terms: ReturnType<typeof retryTerms>
  try {
    terms = retryTerms(context, ask, call, place, widened?.network ?? context.network)
  } catch (error) {
    return failureResult(error, call)
  }
  const { policy, timeoutMs } = terms
  const owner: JobOwner = { sessionId: call.sessionId, agent: call.agent }
  const fields = {
    agent: call.agent,
    toolName: 'bash' as const,
    callId: call.callId,
    // Audit text a harness may show as it is: the justification escaped, as `display` shows it.
    reason: ESCALATION_TEXTS.approvalReason(target, displayLine(ask.justification)),
    signal: call.signal,
    command: ask.command,
    workdir: place.workdir,
    givenWorkdir: place.givenWorkdir === place.workdir ? undefined : place.givenWorkdir,
    workspaceRoot: place.root,
    currentMode: place.currentMode,
    requestedMode: ask.mode ?? place.currentMode,
    additionalHosts: ask.hosts,
    currentNetwork: context.network,
    justification: ask.justification,
    runInBackground: ask.background,
    timeoutMs,
    precedingFailure: failures.precedingFailure(owner, ask.command),
    sessionId: call.sessionId,
    policy,
  }
  const digest = approvalDigest({
    command: ask.command,
    workdir: place.workdir,
    policy,
    runInBackground: ask.background,
    timeoutMs,
    additionalHosts: ask.hosts,
  })
  const answered = answerOutcome(
    await approval.request({ ...fields, digest, display: approvalDisplay(fields) }),
    digest,
  )
  if ('error' in answered) return toolError(answered.error, 'ESCALATION_REFUSED')
  const decided = escalationOutcome(target, answered.outcome)
  if (!decided.granted) return toolError(decided.error, 'ESCALATION_REFUSED')
  return { policy, hosts: ask.hosts, digest }
}

/**
 * The directory a call names, resolved against the workspace root (`givenWorkdir`), and the real
 * directory it leads to, every symlink resolved (`workdir`): the command runs there, and that is
 * what a person is shown and the approval digest covers.
 */
function workdirOf(root: string, given: string | null | undefined): { givenWorkdir: string; workdir: string } {
  const givenWorkdir = given == null ? root : isAbsolute(given) ? given : resolvePath(root, given)
  return { givenWorkdir, workdir: canonicalPath(givenWorkdir) }
}

/** The policy of a call without approval: the session's mode (else the default) and the tool set's network. */
function baselinePolicy(
  context: BashToolContext,
  call: ToolCall,
  workdir: string,
  root: string,
): SandboxExecutionPolicy {
  return resolvePolicy({
    ...configFieldsFor(context, root),
    cwd: workdir,
    workspaceRoot: root,
    defaultMode: context.defaultMode,
    sessionMode: call.sessionMode,
    sessionId: call.sessionId,
    network: context.network,
  })
}

/** Builds the bash tool of one tool set (shared state in `context`); createBashTools uses it. */
export function bashToolIn(context: BashToolContext): BashTool {
  const { executor, jobs, failures } = context
  const sandboxed = executor.sandboxMode !== undefined
  // The schema offered to the model; the parser accepts the escalation fields always, to refuse them by name.
  const offered = sandboxed ? BashArgumentsSchema : BashArgumentsUnsandboxedSchema

  /** SANDBOX_UNAVAILABLE from a run or start: nothing ran, and the approval of a retry should say so. */
  function rememberRunnerFailure(error: unknown, spec: ShellExecSpec, call: ToolCall, owner: JobOwner): void {
    if (!isSandboxUnavailableError(error) || call.signal?.aborted) return
    const where = { callId: call.callId, command: spec.command, workdir: spec.workdir }
    failures.record(owner, { ...where, kind: 'runner-failed', mode: error.mode, paths: [] })
  }

  async function runForeground(spec: ShellExecSpec, call: ToolCall, owner: JobOwner): Promise<BashToolResult> {
    let result: ShellRunResult
    try {
      result = await executor.run(spec, call.onOutput ? { onOutput: call.onOutput } : undefined)
    } catch (error) {
      rememberRunnerFailure(error, spec, call, owner)
      return failureResult(error, call)
    }
    if (result.aborted) return { ...toolError('tool call aborted', 'TOOL_ABORTED'), result }
    const failure = failureOf(result.sandbox, { callId: call.callId, command: spec.command, workdir: spec.workdir })
    if (failure) failures.record(owner, failure)
    else failures.noteCall(owner)
    return { content: renderResult(result, denialHints(context, result.sandbox?.mode)), isError: false, result }
  }

  async function startJob(spec: ShellExecSpec, call: ToolCall, owner: JobOwner): Promise<BashToolResult> {
    let process: ShellProcess
    try {
      process = executor.start(spec)
    } catch (error) {
      rememberRunnerFailure(error, spec, call, owner)
      return failureResult(error, call)
    }
    try {
      const job = await jobs.start({
        process,
        command: spec.command,
        workdir: spec.workdir,
        owner,
        callId: call.callId,
      })
      failures.noteCall(owner)
      return { content: startedJobText(job), isError: false, job }
    } catch (error) {
      // Nothing may keep running that no job runtime owns.
      process.kill()
      return toolError(
        `the jobs runtime refused the job: ${error instanceof Error ? error.message : String(error)}`,
        'JOBS_FAILED',
      )
    }
  }

  return {
    name: 'bash',
    description: DESCRIPTION + (sandboxed ? SANDBOX_DESCRIPTION : ''),
    inputSchema: modelInputSchema(offered),
    argumentsSchema: offered,
    async execute(raw, call) {
      checkToolCall(call)
      const parsed = parseArguments(BashArgumentsSchema, raw)
      if (!parsed.ok) return parsed.error
      const args = parsed.args
      const asks = [args.sandbox_permissions, args.additional_hosts, args.justification]
      if (!sandboxed && asks.some((field) => field !== undefined)) {
        return toolError(ESCALATION_TEXTS.notAvailable, 'INVALID_ESCALATION')
      }
      const check = validateEscalationArgs(args)
      if (!check.ok) return toolError(check.error, 'INVALID_ESCALATION')

      const owner: JobOwner = { sessionId: call.sessionId, agent: call.agent }
      const root = canonicalPath(call.cwd ?? context.workspaceRoot)
      const { givenWorkdir, workdir } = workdirOf(root, args.workdir)
      const background = args.run_in_background === true
      const defaultMode = context.defaultMode
      const currentMode = call.sessionMode ?? defaultMode

      let approved: ApprovedRetry | undefined
      if (check.escalation && currentMode !== undefined) {
        const ask = { ...check.escalation, command: args.command, background, timeoutMs: args.timeout_ms }
        const asked = await approveRetry(context, ask, call, { workdir, givenWorkdir, root, currentMode })
        if ('content' in asked) return asked
        approved = asked
      }
      // Nothing spawns after a late abort (also not a background job: it is checked before it starts).
      if (call.signal?.aborted) return toolError('tool call aborted', 'TOOL_ABORTED')

      let spec: ShellExecSpec
      try {
        const sandboxPolicy = approved
          ? approved.policy
          : sandboxed
            ? baselinePolicy(context, call, workdir, root)
            : undefined
        const execution: ToolExecution = { sessionId: call.sessionId, callId: call.callId, agent: call.agent }
        spec = executor.resolve({
          command: args.command,
          workdir,
          // A background job has no timeout, and its cancellation is job_kill, not this call's signal.
          timeoutMs: background ? undefined : args.timeout_ms,
          signal: background ? undefined : call.signal,
          sandboxPolicy,
          execution,
          dshEnv: context.shellEnv?.collect(execution),
        })
      } catch (error) {
        return failureResult(error, call)
      }
      // What runs is what the person approved: one changed byte of command, workdir, policy or timeout refuses.
      if (approved && approvalDigestOfRun(spec, background, approved.hosts) !== approved.digest) {
        return toolError(APPROVAL_ANSWER_TEXTS.otherDigest, 'ESCALATION_REFUSED')
      }
      return background ? startJob(spec, call, owner) : runForeground(spec, call, owner)
    },
  }
}

/** Builds the bash tool alone (its background jobs go to `options.jobs`); see createBashTools for the job tools. */
export function createBashTool(options: BashToolOptions): BashTool {
  return bashToolIn(bashToolContext(options))
}
