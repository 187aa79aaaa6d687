/**
 * The shell seam's types (seed 000, names and fields kept; cordon's extensions marked).
 *
 * A caller's ShellExecRequest is resolved into a ShellExecSpec; `run` yields a
 * ShellRunResult, `start` a ShellProcess. Types only: no values live here.
 */
import type { Readable } from 'node:stream'
import type { NetworkFacts } from '../policy/network/facts.js'
import type { ClosedClassFact, SandboxEnforcement, SandboxExecutionPolicy, SandboxMode } from '../policy/vocabulary.js'

import type { CollectedOutput, DshEnvironment, DshEnvironmentKey } from '../subprocess/types.js'

export type { CollectedOutput, DshEnvironment, DshEnvironmentKey }

/**
 * A caller's execution REQUEST: `workdir` and `timeoutMs` are optional and filled by
 * ShellExecutor.resolve from the implementation's config.
 */
export interface ShellExecRequest {
  command: string
  /** Working directory override (default: implementation-configured). */
  workdir?: string | undefined
  /** Timeout override in milliseconds (implementations cap it). */
  timeoutMs?: number | undefined
  /** Foreground stdout capture budget in bytes (trusted in-process callers only). */
  stdoutMaxBytes?: number | undefined
  /** Abort signal — implementations kill the command when it fires. */
  signal?: AbortSignal | undefined
  /** Bytes to write to the command's stdin, then close it; absent leaves stdin empty. */
  stdin?: string | undefined
  /** Ordinary environment entries, merged after the credential scrub and before `dshEnv`. */
  env?: Record<string, string> | undefined
  /** Harness-owned `DSH_*` variables for this execution; merged last. */
  dshEnv?: DshEnvironment | undefined
  /** Fully resolved per-call sandbox policy; sandboxing executors default it. */
  sandboxPolicy?: SandboxExecutionPolicy | undefined
  /**
   * cordon: the tool execution this command serves. Without `dshEnv`, an executor with an env
   * registry collects the `DSH_*` snapshot from it (`DSH_SESSION_ID`, what contributors see).
   */
  execution?: ToolExecution | undefined
}

/** A resolved execution spec; `start` ignores `timeoutMs` (background processes have no executor timeout). */
export interface ShellExecSpec {
  command: string
  workdir: string
  timeoutMs: number
  /** Resolved foreground stdout capture budget in bytes. */
  stdoutMaxBytes: number
  /** Abort signal — implementations kill the command when it fires. */
  signal?: AbortSignal | undefined
  /** Bytes to write to stdin before closing it; absent means no stdin. */
  stdin?: string | undefined
  /** Ordinary environment entries; `dshEnv` still merges after them. */
  env?: Record<string, string> | undefined
  /** Managed `DSH_*` snapshot; merges after `env`. */
  dshEnv?: DshEnvironment | undefined
  /** Resolved sandbox policy; ignored by executors that do not confine. */
  sandboxPolicy: SandboxExecutionPolicy | undefined
  /** cordon: the tool execution this command serves (carried through from the request). */
  execution?: ToolExecution | undefined
}

/**
 * Sandbox facts for one run, present iff a sandboxing executor handled it. Facts are
 * reported independently of exit status.
 */
export interface ShellSandboxInfo {
  /** The mode the command actually ran under. */
  mode: SandboxMode
  /** Whether the sandbox denied a file operation. */
  denied: boolean
  /** How completely the selected runner enforced the requested mode. */
  enforcement?: SandboxEnforcement
  /** Whether the sandbox runner failed before the command could run. */
  runnerFailed?: boolean
  /** cordon: the backend that confined the run (`landlock`, `bubblewrap`, `seatbelt`). */
  backend?: string
  /** cordon: the denied paths, where the backend can name them. */
  deniedPaths?: readonly string[]
  /**
   * cordon: under a network allow-list, what its proxy saw: each host:port refused (how often, why)
   * and the bytes of each allowed one. A failed run with a refusal is `denied`, for the network.
   */
  network?: NetworkFacts
  /** cordon: what `denied` rests on: a file operation, the network, or both. */
  deniedFor?: ReadonlyArray<'files' | 'network'>
  /**
   * cordon: every path whose write the sandbox refused, whatever the exit: a run that exits 0 can
   * have lost a write (`denied` and `deniedPaths` keep their meaning: a failed run's).
   */
  refusedPaths?: readonly string[]
  /** cordon: where the refusal facts came from: the command's own messages, or the kernel's audit records. */
  refusalSource?: 'messages' | 'audit'
  /** cordon: the classes the backend closes whole that the run met (shared memory, terminals, unix sockets), each with its way out. */
  closedClasses?: ReadonlyArray<ClosedClassFact>
  /** cordon: the environment variables the scrub removed (names only), on a failed run. */
  removedEnv?: readonly string[]
}

/** The outcome of one completed (or killed) foreground run. */
export interface ShellRunResult {
  /** Exit code; null when the process died from a signal. */
  exitCode: number | null
  /** Terminating signal (e.g. 'SIGTERM'); null on normal exit. */
  signal: NodeJS.Signals | null
  /** True when the executor's own timeout was the FIRST cause to cut the command short. */
  timedOut: boolean
  /** True when the caller's AbortSignal was the FIRST cause (and not the timeout). */
  aborted: boolean
  /** The effective timeout applied to this run (after defaulting/capping). */
  timeoutMs: number
  stdout: CollectedOutput
  stderr: CollectedOutput
  /** Sandbox execution facts, absent for an unsandboxed executor. */
  sandbox?: ShellSandboxInfo
}

/** Lifecycle state of a background process (settled exactly once). */
export type ShellProcessStatus = 'running' | 'completed' | 'killed'

/** One incremental ShellProcess.readOutput read. */
export interface ShellProcessRead {
  /** Output produced since the previous read (stderr in a marked section). */
  delta: string
  /** True when truncation dropped unread bytes the delta cannot include. */
  lossy: boolean
  /** Full stdout spill file, when stdout truncation occurred and a safe path is available. */
  stdoutSpillPath?: string
  /** Full stderr spill file, when stderr truncation occurred and a safe path is available. */
  stderrSpillPath?: string
}

/** A background process handle returned by ShellExecutor.start; buffered output stays readable after exit. */
export interface ShellProcess {
  /** Process lifecycle state (settled exactly once). */
  status: ShellProcessStatus
  /** Exit code once finished (null = killed by signal / still running). */
  exitCode: number | null
  /** Terminating signal name, when signal-killed. */
  signal: NodeJS.Signals | null
  /** Resolves when the process closes; never rejects (a spawn failure settles as `killed`). */
  readonly done: Promise<void>
  /** Sandbox facts, stamped once a confined process settles. */
  sandbox?: ShellSandboxInfo
  /** Output produced since the previous read (consuming); lossy reads point at spill files. */
  readOutput(): ShellProcessRead
  /** Kill the process group; false when it had already finished. Idempotent. */
  kill(): boolean
}

/** cordon: what a foreground run may take besides its spec (an executor that does not stream ignores it). */
export interface ShellRunOptions {
  /** Receives the command's output as it comes, decoded per stream. */
  onOutput?: ((chunk: string, stream: 'stdout' | 'stderr') => void) | undefined
  /** A stream fed to the command's stdin as it reads (the spec's `stdin` must then be absent). */
  stdin?: Readable | undefined
}

/** The shell executor seam: resolve a request, run it in the foreground or start it in the background. */
export interface ShellExecutor {
  /** Apply implementation-owned defaults and caps to a request. */
  resolve(request: ShellExecRequest): ShellExecSpec
  /** Run in the foreground; rejects only on infrastructure failure. `options` is cordon's (streaming, a stdin stream). */
  run(spec: ShellExecSpec, options?: ShellRunOptions): Promise<ShellRunResult>
  /** Start in the background and return the handle immediately. */
  start(spec: ShellExecSpec): ShellProcess
  /** The configured mode fallback, defined iff the executor confines. */
  readonly sandboxMode?: SandboxMode | undefined
}

/** The tool execution a DSH_* snapshot is collected for. */
export interface ToolExecution {
  /** The calling session's id; `DSH_SESSION_ID` is set iff present. */
  sessionId?: string | undefined
  /** The tool call's id. */
  callId?: string | undefined
  /** The agent the call belongs to, when there is one. */
  agent?: string | undefined
}

/** One declared variable of a contributor. */
export interface BashEnvVariable {
  /** `DSH_` followed by `[A-Z][A-Z0-9_]*`. */
  key: DshEnvironmentKey
  /** What the variable holds (required, non-blank). */
  description: string
}

/** A plugin's contribution to the DSH_* namespace: declared keys and a per-execution resolver. */
export interface BashEnvContributor {
  /** Unique contributor name. */
  name: string
  /** Every key this contributor may return. */
  variables: readonly BashEnvVariable[]
  /** The current values for one execution: declared keys only, strings only; an absent key is unset. */
  resolve(execution: ToolExecution): Partial<Record<DshEnvironmentKey, string>> | undefined
}

/** A declared variable as listed by ShellEnvRegistry.list. */
export interface BashEnvVariableInfo {
  key: DshEnvironmentKey
  description: string
  /** The contributor that declared it. */
  contributor: string
}
