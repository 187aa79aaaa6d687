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
} from './subprocess/terminal/errors.js'
export type { PtyLoader, PtyModule, PtyProcess, PtyForkOptions, PtyDisposable } from './subprocess/terminal/pty.js'
export { defaultSubprocessRuntime, disposeDefaultSubprocessRuntime } from './subprocess/default-runtime.js'
export { scrubbedParentEnv, DSH_ENV_PREFIX, MINIMAL_ENV_NAMES } from './subprocess/env/scrub.js'
export { explainEnvScrub, type EnvDrop, type ExplainEnvOptions } from './subprocess/env/explain.js'
export { credentialMatch, type CredentialMatch, type CredentialRule } from './subprocess/env/credentials.js'
export { privateParent, createSessionDirs, type SessionDirs } from './subprocess/private-dirs/layout.js'
export { MAX_TIMER_DELAY_MS } from './subprocess/spec/schema.js'
export {
  SandboxUnavailableError,
  SpawnError,
  InvalidRequestError,
  RootChangedError,
  StateInGrantError,
  AbortedError,
  isSandboxUnavailableError,
  isSpawnError,
  isInvalidRequestError,
  isRootChangedError,
  isStateInGrantError,
  isAbortedError,
  SANDBOX_UNAVAILABLE,
  INVALID_REQUEST,
  ROOT_CHANGED,
  STATE_IN_GRANT,
  ConfigInvalidError,
  ConfigWidenedError,
  isConfigInvalidError,
  isConfigWidenedError,
  CONFIG_INVALID,
  CONFIG_WIDENED,
  type ConfigWidening,
} from './policy/errors.js'
export { NativeLoadError, isNativeLoadError } from './subprocess/native.js'
export * from './policy/vocabulary.js'
export * from './policy/schema/exported.js'
export { resolvePolicy, type ResolvePolicyInput } from './policy/resolve.js'
export { isStrictlyWider, ESCALATION_TARGETS, type EscalationTarget } from './policy/widen.js'
export { grantsFor, type SandboxGrants } from './policy/grants.js'
export {
  HIDDEN_DEFAULTS,
  HIDDEN_DEFAULT_NAMES,
  hiddenPlacesFor,
  type HiddenDefault,
  type HiddenPlace,
} from './policy/profiles/hidden-defaults.js'
export { renderResult, parseExitStatus, type ParsedExitStatus, type RenderOptions } from './shell/exit-status.js'
export { ShellEnvRegistry, type ShellEnvRegistryOptions } from './shell/env-registry.js'
export type * from './shell/types.js'
export { LocalSandbox, type LocalSandboxOptions, type ConfinedSpawn } from './sandbox/local-sandbox.js'
export { loadConfig, type ConfigOption } from './sandbox/load-config.js'
export { PROJECT_CONFIG_NAME, type LoadConfigOptions } from './policy/config/load.js'
export { configPolicyInput, type ConfigPolicyInput } from './policy/config/policy-input.js'
export { configJsonSchema, type ConfigFileContent } from './policy/config/schema.js'
export {
  CONFIG_SOURCE_KINDS,
  type ConfigSettings,
  type ConfigSource,
  type ConfigSourceKind,
  type ConfigSources,
  type ResolvedConfig,
} from './policy/config/settings.js'
export type { HostPrograms } from './sandbox/bubblewrap/program.js'
export {
  clearProbeCache,
  type SandboxCapabilities,
  type BackendCapability,
  type SandboxBackendName,
} from './sandbox/probe.js'
export type { ConfinedTerminal } from './sandbox/confine-terminal.js'
export { classifyDenial } from './sandbox/denials/classify.js'
export { explainSeatbelt, type SeatbeltExplainOptions, type SeatbeltExplanation } from './sandbox/seatbelt/explain.js'
export {
  ShellExecutor,
  LocalShellExecutor,
  SHELL_ENV,
  type LocalShellExecutorInit,
  type ShellSandbox,
} from './shell/executor.js'
export type { LocalShellExecutorOptions } from './shell/executor-options.js'
export { CommandAbortedError, isCommandAbortedError, ABORTED } from './shell/command-aborted-error.js'
export {
  BashExecutor,
  type BashExecRequest,
  type BashExecSpec,
  type BashProcess,
  type BashRunResult,
} from './shell/bash-names.js'
export {
  createBashTool,
  offersEscalation,
  type BashTool,
  type BashToolCall,
  type BashToolOptions,
  type BashToolResult,
} from './tool/bash-tool.js'
export { createBashTools, type BashTools } from './tool/toolset.js'
export { renderRefusalLog, type SandboxRefusalsTool, type SandboxRefusalsResult } from './tool/refusals-tool.js'
export type { RefusalLogSource } from './tool/bash-tool-options.js'
export {
  MAX_LOGGED_RUNS,
  type NotedRun,
  type RefusalLogQuery,
  type RefusalLogRead,
} from './sandbox/refusal-log/log.js'
export {
  REFUSALS_PER_ENTRY,
  LOGGED_COMMAND_CHARS,
  type RefusalLogEntry,
  type LoggedRefusal,
  type PathRefusal,
  type HostRefusal,
  type ClassRefusal,
} from './sandbox/refusal-log/entry.js'
export { checkBashToolOptions } from './tool/bash-tool-options.js'
export {
  MAX_JOB_WAIT_MS,
  type JobKillTool,
  type JobOutputTool,
  type JobToolResult,
} from './tool/jobs/tools.js'
export {
  renderJobRead,
  jobStatusLine,
  droppedOutputNote,
  NO_NEW_OUTPUT,
  type JobRenderOptions,
} from './tool/jobs/render.js'
export type {
  JobInfo,
  JobKill,
  JobOutput,
  JobOutputOptions,
  JobOwner,
  Jobs,
  JobStart,
} from './tool/jobs/port.js'
export { InMemoryJobs, type InMemoryJobsOptions } from './tool/jobs/in-memory.js'
export { modelInputSchema, type ToolInputSchema, type ToolSchemaNode } from './tool/tool-schema.js'
export {
  BashArgumentsSchema,
  BashArgumentsUnsandboxedSchema,
  JobOutputArgumentsSchema,
  JobKillArgumentsSchema,
  SandboxRefusalsArgumentsSchema,
  MAX_REFUSALS_LISTED,
  type SandboxRefusalsArguments,
  type BashArguments,
  type JobOutputArguments,
  type JobKillArguments,
} from './tool/arguments.js'
export { toolError, type ModelTool, type ToolCall, type ToolResult } from './tool/model-tool.js'
export {
  BASH_TOOL_ERROR_CODES,
  JOB_TOOL_ERROR_CODES,
  TOOL_ERROR_CODES,
  type BashToolErrorCode,
  type ToolErrorCode,
} from './tool/tool-error-codes.js'
export {
  answerOutcome,
  approvalDigest,
  describeApprovalRequest,
  type Approval,
  type ApprovalAnswer,
  type ApprovalDisplay,
  type ApprovalRequest,
  type ApprovalSubject,
  type PrecedingFailure,
} from './tool/approval.js'
export { displayBlock, displayLine, escapeDisplayText } from './policy/display-text.js'
export type { ApprovalOutcome } from './policy/widen.js'
