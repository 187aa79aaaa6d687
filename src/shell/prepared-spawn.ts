/**
 * What the executor hands a background process: a spawn spec ready for the runtime (confined, or
 * deliberately not), and the two executor steps a job needs — preparing its spawn and reading the
 * sandbox facts of how it ended. Its own file so `background-process.ts` depends on this seam,
 * not on the executor that constructs it (no import cycle).
 */
import type { NetworkFacts } from '../policy/network/facts.js'
import type { SandboxMode } from '../policy/vocabulary.js'
import type { VerdictPlan } from '../sandbox/verdict.js'
import type { SubprocessSpawnSpec } from '../subprocess/types.js'
import type { ShellExecSpec, ShellSandboxInfo } from './types.js'

/** A confined (or deliberately unconfined) spawn ready for the runtime, with its plan. */
export interface PreparedSpawn {
  spec: SubprocessSpawnSpec
  mode: SandboxMode | undefined
  /** The confinement plan (absent when unsandboxed or danger-full-access). */
  plan: VerdictPlan | undefined
  /** Where the run's shell logs its failed commands (see failure-log.ts), when armed. */
  failureLog?: string | undefined
}

/** How a run's spawn is prepared. */
export interface PrepareOptions {
  signal?: AbortSignal
  supervise: boolean
  stdoutMaxBytes: number
  onOutput?: SubprocessSpawnSpec['onOutput']
  /** The caller feeds stdin from a stream (`run`'s `stdin` option): the spawn's stdin is a pipe. */
  stdinPipe?: boolean
}

/** The executor steps a background process calls: `LocalShellExecutor` implements them. */
export interface SpawnPreparer {
  readonly config: { readonly maxOutputBytes: number }
  /** Builds the runtime spec for `spec` and confines it; throws SANDBOX_UNAVAILABLE, never falls back. */
  prepare(spec: ShellExecSpec, options: PrepareOptions): PreparedSpawn
  /** Sandbox facts of a finished run (undefined when unsandboxed). */
  factsOf(
    prepared: PreparedSpawn,
    exitCode: number | null,
    stderr: string,
    spec: Pick<ShellExecSpec, 'workdir' | 'command'>,
    runnerFailed?: boolean,
    stdout?: string,
    refused?: readonly string[],
    network?: NetworkFacts,
  ): ShellSandboxInfo | undefined
  /** Hands a settled run's facts to the sandbox's refusal log. */
  noteRun(spec: ShellExecSpec, facts: ShellSandboxInfo | undefined, background: boolean): void
}
