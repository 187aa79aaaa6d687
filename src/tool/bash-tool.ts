/**
 * The model-facing bash tool: a zod-validated argument schema, execution through a shell
 * executor, rendering with exit markers, and the one strictly-wider retry the user approves.
 * What the model sends is untrusted: it can choose a command, a workdir, a timeout and an
 * escalation; it can never pass env, stdin or an output budget.
 */
import { isAbsolute, resolve as resolvePath } from 'node:path'
import { z } from 'zod'
import { isSandboxUnavailableError, isSpawnError } from '../policy/errors.js'
import { resolvePolicy } from '../policy/resolve.js'
import type { SandboxMode } from '../policy/vocabulary.js'
import {
  ESCALATION_TARGETS,
  ESCALATION_TEXTS,
  escalationOutcome,
  narrowestWiderMode,
  validateEscalationArgs,
  wideningError,
} from '../policy/widen.js'
import { renderResult } from '../shell/exit-status.js'
import { spawnFailureText } from '../shell/spawn-failure.js'
import type { ShellExecutor } from '../shell/executor.js'
import type { ShellRunResult } from '../shell/types.js'
import type { Approval } from './approval.js'

/** The call context the harness passes with each invocation. */
export interface BashToolCall {
  /** This call's id (an approval is bound to it). */
  callId: string
  /** The agent the call belongs to; needed to route an approval. */
  agent?: string | undefined
  sessionId?: string | undefined
  /** The session's mode override (the baseline an escalation must widen). */
  sessionMode?: SandboxMode | undefined
  /** Aborts the call (the command is terminated). */
  signal?: AbortSignal | undefined
}

/** What one invocation returns: the text for the model, whether it is an error, and the facts. */
export interface BashToolResult {
  content: string
  isError: boolean
  /** A stable code when `isError` (`TOOL_ABORTED`, `SANDBOX_UNAVAILABLE`, `INVALID_ARGUMENTS`, …). */
  code?: string
  result?: ShellRunResult
}

/** Options of createBashTool. */
export interface BashToolOptions {
  executor: ShellExecutor
  /** Required for escalation; absent: a requested escalation fails without prompting. */
  approval?: Approval
  /** Workspace root of the calls' policies, and the base of relative workdirs. */
  workspaceRoot: string
}

/** The tool as a harness registers it. */
export interface BashTool {
  name: 'bash'
  description: string
  /** JSON Schema of the arguments (escalation fields only when the executor confines). */
  inputSchema: Record<string, unknown>
  execute(args: unknown, call: BashToolCall): Promise<BashToolResult>
}

const baseArgs = {
  command: z.string().min(1).describe('The bash command to run (bash -c, a fresh shell each call).'),
  workdir: z.string().optional().describe('Working directory; relative paths resolve against the workspace root.'),
  timeout_ms: z.number().positive().finite().optional().describe('Timeout in milliseconds (capped by the harness).'),
}
const escalationArgs = {
  sandbox_permissions: z
    .enum(ESCALATION_TARGETS)
    .optional()
    .describe(
      'Retry a sandbox-denied command once with this wider mode (the narrowest that suffices); the user is asked.',
    ),
  justification: z.string().optional().describe('One sentence telling the user why the wider mode is needed.'),
}

const DESCRIPTION = `Runs a bash command and returns its output with status markers.
Check the [exit code: N] marker on every result; investigate failures before moving on. Other
markers: [timed out after Nms], [killed by signal: SIG], (no output), [stderr].`
const SANDBOX_DESCRIPTION = `
Commands run in a sandbox. [sandbox: file access denied under <mode> mode] means the sandbox,
not the command, refused a write. Only then, retry the exact same command once with
sandbox_permissions (the narrowest wider mode that suffices) and a one-sentence justification;
the user is asked to approve. Never escalate speculatively. A rejection is final. Escalation is
unavailable when approvals are disabled.`

function fail(content: string, code: string): BashToolResult {
  return { content, isError: true, code }
}

/** Builds the bash tool over `options.executor`; the escalation fields exist iff the executor confines. */
export function createBashTool(options: BashToolOptions): BashTool {
  const sandboxed = options.executor.sandboxMode !== undefined
  // Unknown keys are stripped, so a model cannot smuggle env, stdin or budgets in.
  const schema = z.object(sandboxed ? { ...baseArgs, ...escalationArgs } : baseArgs)
  const lenient = z.object({ ...baseArgs, ...escalationArgs })
  return {
    name: 'bash',
    description: DESCRIPTION + (sandboxed ? SANDBOX_DESCRIPTION : ''),
    inputSchema: z.toJSONSchema(schema) as Record<string, unknown>,
    async execute(raw, call) {
      const parsed = lenient.safeParse(raw)
      if (!parsed.success) {
        return fail(
          `invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
          'INVALID_ARGUMENTS',
        )
      }
      const args = parsed.data
      if (!sandboxed && (args.sandbox_permissions !== undefined || args.justification !== undefined)) {
        return fail(ESCALATION_TEXTS.notAvailable, 'INVALID_ESCALATION')
      }
      const check = validateEscalationArgs(args)
      if (!check.ok) return fail(check.error, 'INVALID_ESCALATION')
      const defaultMode = options.executor.sandboxMode
      const effective = call.sessionMode ?? defaultMode
      let approvedMode: SandboxMode | undefined
      if (check.escalation && effective !== undefined) {
        const target = check.escalation.mode
        const notWider = wideningError(effective, target)
        if (notWider) return fail(notWider, 'ESCALATION_NOT_WIDER')
        if (!options.approval) return fail(ESCALATION_TEXTS.noApprovalService(target), 'ESCALATION_UNAVAILABLE')
        if (call.agent === undefined) return fail(ESCALATION_TEXTS.noAgent(target), 'ESCALATION_UNAVAILABLE')
        const outcome = await options.approval.request({
          agent: call.agent,
          toolName: 'bash',
          callId: call.callId,
          reason: ESCALATION_TEXTS.approvalReason(target, check.escalation.justification),
          signal: call.signal,
        })
        const decided = escalationOutcome(target, outcome)
        if (!decided.granted) return fail(decided.error, 'ESCALATION_REFUSED')
        approvedMode = decided.mode
      }
      if (call.signal?.aborted) return fail('tool call aborted', 'TOOL_ABORTED') // nothing spawns after a late abort
      const workdir =
        args.workdir === undefined
          ? options.workspaceRoot
          : isAbsolute(args.workdir)
            ? args.workdir
            : resolvePath(options.workspaceRoot, args.workdir)
      let result: ShellRunResult
      try {
        const sandboxPolicy = sandboxed
          ? resolvePolicy({
              cwd: workdir,
              workspaceRoot: options.workspaceRoot,
              defaultMode,
              sessionMode: call.sessionMode,
              approvedMode,
              sessionId: call.sessionId,
            })
          : undefined
        const spec = options.executor.resolve({
          command: args.command,
          workdir,
          timeoutMs: args.timeout_ms,
          signal: call.signal,
          sandboxPolicy,
        })
        result = await options.executor.run(spec)
      } catch (error) {
        if (call.signal?.aborted) return fail('tool call aborted', 'TOOL_ABORTED')
        const message = error instanceof Error ? error.message : String(error)
        if (isSandboxUnavailableError(error)) return fail(message, 'SANDBOX_UNAVAILABLE')
        if (isSpawnError(error)) return fail(spawnFailureText(error), 'SPAWN_FAILED')
        return fail(message, 'TOOL_FAILED')
      }
      if (result.aborted) return { ...fail('tool call aborted', 'TOOL_ABORTED'), result }
      // The hint is offered only where a retry could succeed: a wider mode exists and approvals can be asked.
      const ranUnder = result.sandbox?.mode
      const canWiden =
        ranUnder !== undefined && narrowestWiderMode(ranUnder) !== undefined && options.approval !== undefined
      return { content: renderResult(result, { escalationHint: canWiden }), isError: false, result }
    },
  }
}
