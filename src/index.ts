/** cordon's public API: re-exports only. */
export { SubprocessRuntime, LocalSubprocessRuntime, type LocalSubprocessRuntimeOptions } from './subprocess/runtime.js'
export type {
  CollectedOutput,
  DshEnvironment,
  DshEnvironmentKey,
  SubprocessCollect,
  SubprocessCollectedOutputs,
  SubprocessConfinement,
  SubprocessHandle,
  SubprocessOutcome,
  SubprocessOutputMode,
  SubprocessOutputRead,
  SubprocessOutputReader,
  SubprocessSpawnSpec,
  SubprocessStdinMode,
  SubprocessStdio,
  SubprocessTerminalDisposable,
  SubprocessTerminalForeground,
  SubprocessTerminalHandle,
  SubprocessTerminalInputWait,
  SubprocessTerminalSpawnSpec,
} from './subprocess/types.js'
export {
  TerminalUnavailableError,
  TerminalCleanupError,
  isTerminalUnavailableError,
  isTerminalCleanupError,
  TERMINAL_UNAVAILABLE,
  TERMINAL_CLEANUP_FAILED,
} from './subprocess/terminal-errors.js'
export type { PtyLoader, PtyModule, PtyProcess, PtyForkOptions, PtyDisposable } from './subprocess/terminal-pty.js'
export { scrubbedParentEnv } from './subprocess/env.js'
export { MAX_TIMER_DELAY_MS } from './subprocess/spec-schema.js'
export {
  SandboxUnavailableError,
  SpawnError,
  InvalidRequestError,
  isSandboxUnavailableError,
  isSpawnError,
  isInvalidRequestError,
  SANDBOX_UNAVAILABLE,
} from './policy/errors.js'
export * from './policy/vocabulary.js'
export { resolvePolicy, type ResolvePolicyInput } from './policy/resolve.js'
export { isStrictlyWider, ESCALATION_TARGETS } from './policy/widen.js'
export { grantsFor, type SandboxGrants } from './policy/grants.js'
export { renderResult, parseExitStatus } from './shell/exit-status.js'
export { ShellEnvRegistry } from './shell/env-registry.js'
export type * from './shell/types.js'
export { LocalSandbox, type LocalSandboxOptions, type ConfinedSpawn } from './sandbox/local-sandbox.js'
export type { SandboxCapabilities, BackendCapability, SandboxBackendName } from './sandbox/probe.js'
export { classifyDenial } from './sandbox/facts.js'
export { explainSeatbelt, type SeatbeltExplainOptions, type SeatbeltExplanation } from './sandbox/seatbelt-explain.js'
export {
  ShellExecutor,
  LocalShellExecutor,
  SHELL_ENV,
  type LocalShellExecutorInit,
  type ShellSandbox,
} from './shell/executor.js'
export type { LocalShellExecutorOptions } from './shell/executor-options.js'
export {
  createBashTool,
  type BashTool,
  type BashToolCall,
  type BashToolOptions,
  type BashToolResult,
} from './tool/bash-tool.js'
export type { Approval, ApprovalRequest } from './tool/approval.js'
export type { ApprovalOutcome } from './policy/widen.js'
