/**
 * The shell executor (seed 000): a model's bash call in, facts out. `resolve` fills and caps a
 * request, `run` executes it in the foreground under one fused deadline, `start` in the
 * background under a supervisor. Confinement comes from the sandbox floor; this floor only
 * decides the spec, classifies the facts and never runs a confined mode unconfined.
 */
import { isAbsolute, resolve as resolvePath } from 'node:path'
import { isSpawnError } from '../policy/errors.js'
import { resolvePolicy } from '../policy/resolve.js'
import type { SandboxEnforcement, SandboxExecutionPolicy, SandboxMode } from '../policy/vocabulary.js'
import type { NetworkFacts } from '../policy/network/facts.js'
import type { NotedRun, RefusalLogQuery, RefusalLogRead } from '../sandbox/refusal-log/log.js'
import { runnerFailureToError, runVerdict, type VerdictPlan } from '../sandbox/verdict.js'
import { armFailureLog, readFailureLog } from './failure-log.js'
import { defaultSubprocessRuntime } from '../subprocess/default-runtime.js'
import { removedCredentialNames } from '../subprocess/env/explain.js'
import type { SubprocessRuntime } from '../subprocess/runtime.js'
import type { SubprocessHandle, SubprocessSpawnSpec } from '../subprocess/types.js'
import { BackgroundShellProcess } from './background-process.js'
import { checkOneStdin, feedStdin, streamDecoder } from './run-streams.js'
import type { ShellEnvRegistry } from './env-registry.js'
import {
  checkShellRequest,
  checkShellSpec,
  executorConfig,
  type ExecutorConfig,
  type LocalShellExecutorOptions,
} from './executor-options.js'
import type { PreparedSpawn, PrepareOptions, SpawnPreparer } from './prepared-spawn.js'
import type {
  CollectedOutput,
  ShellExecRequest,
  ShellExecSpec,
  ShellExecutor as ShellExecutorSeam,
  ShellProcess,
  ShellRunOptions,
  ShellRunResult,
  ShellSandboxInfo,
  ToolExecution,
} from './types.js'

/** What the executor needs of a sandbox: `LocalSandbox` satisfies it. */
export interface ShellSandbox {
  confine(
    spec: SubprocessSpawnSpec,
    policy: SandboxExecutionPolicy,
  ): {
    spec: SubprocessSpawnSpec
    backend: string
    enforcement?: SandboxEnforcement
    plan?: VerdictPlan
    /** The session's TMPDIR and spill dir (where the failure log and its trap live). */
    tempDir?: string
    spillDir?: string
  }
  /** Notes a settled run for the sandbox's refusal log (LocalSandbox keeps one). */
  noteRun?(run: NotedRun): void
  /** Reads the sandbox's refusal log. */
  refusals?(query?: RefusalLogQuery): RefusalLogRead
}

/** Everything `new LocalShellExecutor(...)` accepts. */
export interface LocalShellExecutorInit extends LocalShellExecutorOptions {
  /** Confines every run; absent: an unsandboxed executor (results carry no `sandbox`). */
  sandbox?: ShellSandbox
  /**
   * The runtime to spawn on, owned by the caller. Default: the host's shared runtime
   * (`defaultSubprocessRuntime()`), disposed with the host. The executor never disposes either.
   */
  subprocess?: SubprocessRuntime
  /** Source of the managed `DSH_*` snapshot when a spec carries none. */
  env?: ShellEnvRegistry
}

/** The executor seam as an abstract class (a remote executor implements the same four members). */
export abstract class ShellExecutor implements ShellExecutorSeam {
  /** Applies defaults and caps to a request. */
  abstract resolve(request: ShellExecRequest): ShellExecSpec
  /** Runs in the foreground; rejects only for infrastructure failures and SANDBOX_UNAVAILABLE. */
  abstract run(spec: ShellExecSpec, options?: ShellRunOptions): Promise<ShellRunResult>
  /** Starts in the background; the handle comes back at once. */
  abstract start(spec: ShellExecSpec): ShellProcess
  /** The default mode; `undefined` when unsandboxed. */
  abstract readonly sandboxMode: SandboxMode | undefined
}

/** The fixed part of every command's environment: no colours, no pagers, a dumb terminal. */
export const SHELL_ENV: Readonly<Record<string, string>> = Object.freeze({
  NO_COLOR: '1',
  TERM: 'dumb',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
})

const TIMEOUT = Symbol('cordon.timeout')

export type { PreparedSpawn } from './prepared-spawn.js'

/** Runs bash commands on this host, confined by a LocalSandbox when one is given. */
export class LocalShellExecutor extends ShellExecutor implements SpawnPreparer {
  readonly config: ExecutorConfig
  private readonly sandbox: ShellSandbox | undefined
  private readonly injectedRuntime: SubprocessRuntime | undefined
  private readonly registry: ShellEnvRegistry | undefined
  private readonly leftovers = new Set<Promise<unknown>>()

  constructor(init: LocalShellExecutorInit = {}) {
    super()
    this.config = executorConfig(init)
    this.sandbox = init.sandbox
    this.injectedRuntime = init.subprocess
    this.registry = init.env
  }

  /**
   * The runtime this executor spawns on and its background jobs belong to: the injected one,
   * else the host's shared runtime (looked up per spawn, so a disposed one is replaced).
   */
  get subprocess(): SubprocessRuntime {
    return this.injectedRuntime ?? defaultSubprocessRuntime()
  }

  /** The configured default mode; `undefined` for an unsandboxed executor. */
  get sandboxMode(): SandboxMode | undefined {
    return this.sandbox ? this.config.defaultMode : undefined
  }

  /** Fills workdir, timeout (capped), stdout budget and, when sandboxed, the default policy; InvalidRequestError on a bad value. */
  resolve(request: ShellExecRequest): ShellExecSpec {
    checkShellRequest(request, this.sandbox !== undefined)
    const c = this.config
    const workdir =
      request.workdir === undefined
        ? c.cwd
        : isAbsolute(request.workdir)
          ? request.workdir
          : resolvePath(c.cwd, request.workdir)
    const sandboxPolicy =
      request.sandboxPolicy ??
      (this.sandbox
        ? resolvePolicy({ cwd: workdir, workspaceRoot: c.workspaceRoot, defaultMode: c.defaultMode })
        : undefined)
    return {
      command: request.command,
      workdir,
      timeoutMs: Math.min(request.timeoutMs ?? c.timeoutMs, c.maxTimeoutMs),
      stdoutMaxBytes: request.stdoutMaxBytes ?? c.maxOutputBytes,
      signal: request.signal,
      stdin: request.stdin,
      env: request.env,
      dshEnv: request.dshEnv,
      sandboxPolicy,
      execution: request.execution,
    }
  }

  /** Builds the runtime spec for `spec` and confines it; throws SANDBOX_UNAVAILABLE, never falls back. */
  prepare(spec: ShellExecSpec, options: PrepareOptions): PreparedSpawn {
    const c = this.config
    const spill = { maxBytes: c.maxSpillBytes, ...(c.spillDir === undefined ? {} : { dir: c.spillDir }) }
    const dshEnv = spec.dshEnv ?? this.registry?.collect(executionOf(spec))
    const base: SubprocessSpawnSpec = {
      argv: ['bash', '-c', spec.command],
      cwd: spec.workdir,
      stdio: {
        stdin: options.stdinPipe ? 'pipe' : spec.stdin === undefined ? 'ignore' : { data: spec.stdin },
        stdout: { maxBytes: options.stdoutMaxBytes, spill },
        stderr: { maxBytes: c.maxOutputBytes, spill },
      },
      graceMs: c.graceMs,
      signal: options.signal,
      env: { ...SHELL_ENV, ...spec.env, ...dshEnv },
      ...(c.environment === 'minimal' ? { environment: 'minimal' as const } : {}),
      supervise: options.supervise,
      onOutput: options.onOutput,
    }
    if (!this.sandbox) return { spec: base, mode: undefined, plan: undefined }
    const policy =
      spec.sandboxPolicy ??
      resolvePolicy({ cwd: spec.workdir, workspaceRoot: c.workspaceRoot, defaultMode: c.defaultMode })
    if (policy.mode === 'danger-full-access') return { spec: base, mode: policy.mode, plan: undefined }
    const confined = this.sandbox.confine(base, policy)
    const armed = armFailureLog(confined.spec, confined)
    return { spec: armed.spec, mode: policy.mode, plan: confined.plan, failureLog: armed.log }
  }

  /** Sandbox facts of a finished run (undefined when unsandboxed). */
  factsOf(
    prepared: PreparedSpawn,
    exitCode: number | null,
    stderr: string,
    spec: Pick<ShellExecSpec, 'workdir' | 'command'>,
    runnerFailed = false,
    stdout = '',
    refused?: readonly string[],
    network?: NetworkFacts,
  ): ShellSandboxInfo | undefined {
    if (prepared.mode === undefined) return undefined
    if (prepared.plan === undefined) return { mode: prepared.mode, denied: false }
    const failures = readFailureLog(prepared.failureLog, { cwd: spec.workdir, command: spec.command })
    return runVerdict(prepared.plan, {
      exitCode,
      stderr,
      stdout,
      cwd: spec.workdir,
      command: spec.command,
      runnerFailed,
      failures,
      refused,
      network,
    })
  }

  /**
   * Runs `bash -c` in the foreground under one deadline (timeout + caller's signal). A signal
   * already aborted is an abort like any other (seed 000: `run` rejects only for infrastructure
   * failures): nothing is spawned nor confined, and the result says `aborted` with no exit.
   * `options.stdin` (cordon): a stream fed to the command's stdin as it reads, closed at its end; the
   * feed stops when the run is over (a command that never reads it does not wait for it).
   */
  async run(spec: ShellExecSpec, options: ShellRunOptions = {}): Promise<ShellRunResult> {
    // A spec made by hand skips resolve's cap: a delay no timer holds would fire after 1 ms.
    checkShellSpec(spec, { foreground: true, confined: this.sandbox !== undefined })
    checkOneStdin(spec, options.stdin)
    if (spec.signal?.aborted) return abortedBeforeSpawn(spec)
    // One controller, two causes: whichever aborts it first is the cause reported.
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(TIMEOUT), spec.timeoutMs)
    const onCallerAbort = () => deadline.abort(spec.signal?.reason)
    spec.signal?.addEventListener('abort', onCallerAbort, { once: true })
    // The feed of a stdin stream stops once the run is over (its tree gone, or it failed to start).
    let stopFeed: (() => void) | undefined
    try {
      const decoder = options.onOutput ? streamDecoder(options.onOutput) : undefined
      const prepared = this.prepare(spec, {
        signal: deadline.signal,
        supervise: false,
        stdoutMaxBytes: spec.stdoutMaxBytes,
        onOutput: decoder?.push,
        stdinPipe: options.stdin !== undefined,
      })
      const handle = this.subprocess.spawn(prepared.spec)
      if (options.stdin && handle.stdin) stopFeed = feedStdin(options.stdin, handle.stdin)
      let outcome: Awaited<SubprocessHandle['done']>
      try {
        outcome = await handle.done
      } catch (error) {
        throw prepared.plan && isSpawnError(error) ? runnerFailureToError(error, prepared.plan.policy.mode) : error
      } finally {
        decoder?.flush()
      }
      clearTimeout(timer)
      // A confined run's supervisor ends what the command left behind: the run is over when its
      // tree is. An unconfined one's leftovers get graceMs, then the group is terminated.
      if (prepared.plan) await handle.waitForExit()
      else this.reapLeftovers(handle)
      const stdout = collectedOf(handle, 'stdout')
      const stderr = collectedOf(handle, 'stderr')
      const cause = deadline.signal.aborted ? (deadline.signal.reason as unknown) : undefined
      const result: ShellRunResult = {
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut: deadline.signal.aborted && cause === TIMEOUT,
        aborted: deadline.signal.aborted && cause !== TIMEOUT,
        timeoutMs: spec.timeoutMs,
        stdout,
        stderr,
      }
      const sandbox = this.factsOf(
        prepared,
        outcome.exitCode,
        stderr.text,
        spec,
        false,
        stdout.text,
        handle.refusedPaths,
        handle.network,
      )
      if (sandbox) result.sandbox = withRemovedEnv(sandbox, outcome.exitCode, prepared.spec)
      this.noteRun(spec, result.sandbox, false)
      return result
    } finally {
      stopFeed?.()
      clearTimeout(timer)
      spec.signal?.removeEventListener('abort', onCallerAbort)
    }
  }

  /** Hands a settled run's facts to the sandbox's refusal log (a confined run only). */
  noteRun(spec: ShellExecSpec, facts: ShellSandboxInfo | undefined, background: boolean): void {
    if (facts === undefined) return
    const { sessionId, agent, callId } = spec.execution ?? {}
    this.sandbox?.noteRun?.({
      command: spec.command,
      workdir: spec.workdir,
      background,
      sessionId,
      agent,
      callId,
      facts,
    })
  }

  /** The sandbox's refusal log as `query` selects it; undefined for an executor without a sandbox or log. */
  refusals(query?: RefusalLogQuery): RefusalLogRead | undefined {
    return this.sandbox?.refusals?.(query)
  }

  /** A foreground run owns its tree: what it left running is terminated graceMs after the leader. */
  private reapLeftovers(handle: SubprocessHandle): void {
    const graceOver = AbortSignal.timeout(this.config.graceMs)
    const reaping = handle.waitForExit(graceOver).then(async (gone) => {
      if (gone) return
      handle.terminate()
      await handle.waitForExit()
    })
    this.leftovers.add(reaping)
    void reaping.finally(() => this.leftovers.delete(reaping))
  }

  /** Starts `bash -c` in the background, supervised; no timeout applies. */
  start(spec: ShellExecSpec): ShellProcess {
    checkShellSpec(spec, { foreground: false, confined: this.sandbox !== undefined })
    return new BackgroundShellProcess(this, this.subprocess, spec)
  }

  /**
   * Ends what this executor owns: the leftovers of its foreground runs. Background jobs belong
   * to the runtime and keep running (an executor-only reload, seed 000); dispose the runtime to
   * end them.
   */
  async dispose(): Promise<void> {
    await Promise.all([...this.leftovers])
  }
}

/** The result of a run whose signal had aborted before it started: nothing ran, so no exit, no output, no sandbox facts. */
function abortedBeforeSpawn(spec: ShellExecSpec): ShellRunResult {
  const empty: CollectedOutput = { text: '', truncated: false }
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: true,
    timeoutMs: spec.timeoutMs,
    stdout: empty,
    stderr: { ...empty },
  }
}

/** The tool execution a spec serves: its own, with the policy's session id when it names none. */
function executionOf(spec: ShellExecSpec): ToolExecution {
  const sessionId = spec.execution?.sessionId ?? spec.sandboxPolicy?.sessionId
  return sessionId === undefined ? { ...spec.execution } : { ...spec.execution, sessionId }
}

/** One stream's batch result from a finished handle. */
export function collectedOf(handle: SubprocessHandle, stream: 'stdout' | 'stderr'): CollectedOutput {
  const read = handle.collected[stream]?.readFrom(0)
  if (!read) return { text: '', truncated: false }
  const out: CollectedOutput = { text: read.text, truncated: read.lossy }
  if (read.lossy && read.spillPath !== undefined) out.spillPath = read.spillPath
  return out
}

/**
 * `facts` with, for a failed run, the credential-shaped names the scrub kept from it (names only:
 * a tool may have needed one).
 */
function withRemovedEnv(
  facts: ShellSandboxInfo,
  exitCode: number | null,
  spawned: SubprocessSpawnSpec,
): ShellSandboxInfo {
  if (exitCode === 0) return facts
  const removed = removedCredentialNames(process.env, spawned)
  return removed.length > 0 ? { ...facts, removedEnv: removed } : facts
}
