/**
 * A tool result's facts as MCP `structuredContent`, shaped exactly as src/mcp/output-schema.ts
 * declares: each field picked by name (a new field of the engine's results stays out until the
 * schema names it), optional ones left out when absent, never `undefined` in the JSON. The text a
 * model reads stays the tool's own `content`; this is for the client's program.
 */
import type { ShellRunResult, ShellSandboxInfo } from '../shell/types.js'
import type { BashToolResult } from '../tool/bash-tool.js'
import type { JobToolResult } from '../tool/jobs/tools.js'
import type { JobInfo } from '../tool/jobs/port.js'
import type { ToolResult } from '../tool/model-tool.js'
import type {
  BashStructured,
  JobStructured,
  JobToolStructured,
  RunStructured,
  SandboxStructured,
} from './output-schema.js'

/** `value` with its undefined members dropped (JSON has no undefined; a closed schema lists what may be there). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/** A non-empty list as a fresh array, else undefined. */
function listOf<T>(items: readonly T[] | undefined): T[] | undefined {
  return items !== undefined && items.length > 0 ? [...items] : undefined
}

/** The sandbox facts of a run or a settled job. */
export function sandboxFacts(info: ShellSandboxInfo): SandboxStructured {
  const refused = info.network?.refused ?? []
  return defined({
    mode: info.mode,
    backend: info.backend,
    enforcement: info.enforcement,
    denied: info.denied,
    deniedFor: listOf(info.deniedFor),
    deniedPaths: listOf(info.deniedPaths),
    refusedPaths: listOf(info.refusedPaths),
    runnerFailed: info.runnerFailed,
    networkRefused: listOf(refused.map((r) => ({ host: r.host, port: r.port, count: r.count, reason: r.reason }))),
    networkRefusedOmitted: info.network?.refusedOmitted,
    closedClasses: listOf(
      (info.closedClasses ?? []).map((c) => ({ class: c.class, evidence: c.evidence, remedy: c.remedy })),
    ),
  })
}

/** A foreground run's facts: how it ended, its output's truncation and spill files, the sandbox's verdict. */
export function runFacts(result: ShellRunResult): RunStructured {
  const stream = (s: ShellRunResult['stdout']) => defined({ truncated: s.truncated, spillPath: s.spillPath })
  return defined({
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    aborted: result.aborted,
    timeoutMs: result.timeoutMs,
    stdout: stream(result.stdout),
    stderr: stream(result.stderr),
    sandbox: result.sandbox === undefined ? undefined : sandboxFacts(result.sandbox),
  })
}

/** A background job's state (its owner stays out: it is this connection). */
export function jobFacts(job: JobInfo): JobStructured {
  return defined({
    id: job.id,
    command: job.command,
    workdir: job.workdir,
    callId: job.callId,
    status: job.status,
    exitCode: job.exitCode,
    signal: job.signal,
    sandbox: job.sandbox === undefined ? undefined : sandboxFacts(job.sandbox),
  })
}

/** bash's structured content: the run, or the job it started, and the error's code. */
export function bashFacts(result: BashToolResult): BashStructured {
  return defined({
    code: result.isError ? result.code : undefined,
    run: result.result === undefined ? undefined : runFacts(result.result),
    job: result.job === undefined ? undefined : jobFacts(result.job),
  })
}

/** A job tool's structured content: the job's state after the call, and the error's code. */
export function jobToolFacts(result: JobToolResult): JobToolStructured {
  return defined({
    code: result.isError ? result.code : undefined,
    job: result.job === undefined ? undefined : jobFacts(result.job),
  })
}

/** The structured content of tool `name`'s result, or undefined for a tool served with text only. */
export function structuredContentOf(name: string, result: ToolResult): Record<string, unknown> | undefined {
  switch (name) {
    case 'bash':
      return bashFacts(result as BashToolResult)
    case 'job_output':
    case 'job_kill':
      return jobToolFacts(result as JobToolResult)
    default:
      return undefined
  }
}

/** The MCP `tools/call` result of tool `name`: its text, `isError`, and the structured facts where it has a schema. */
export function callToolResult(
  name: string,
  result: ToolResult,
): { content: { type: 'text'; text: string }[]; isError: boolean; structuredContent?: Record<string, unknown> } {
  const structured = structuredContentOf(name, result)
  return {
    content: [{ type: 'text', text: result.content }],
    isError: result.isError,
    ...(structured === undefined ? {} : { structuredContent: structured }),
  }
}
