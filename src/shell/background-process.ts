/**
 * A background command (`start`): supervised so a daemon it starts cannot outlive `kill()`, no
 * timeout, output read incrementally and consumed, facts stamped before `done` resolves.
 */
import { isSpawnError } from '../policy/errors.js'
import { isRunnerFailure, runnerFailureToError } from '../sandbox/verdict.js'
import type { SubprocessRuntime } from '../subprocess/runtime.js'
import type { SubprocessHandle } from '../subprocess/types.js'
import type { LocalShellExecutor, PreparedSpawn } from './executor.js'
import type { ShellExecSpec, ShellProcess, ShellProcessRead, ShellProcessStatus, ShellSandboxInfo } from './types.js'

/** The ShellProcess of one `start()`: see the seed's contract for each member. */
export class BackgroundShellProcess implements ShellProcess {
  status: ShellProcessStatus = 'running'
  exitCode: number | null = null
  signal: NodeJS.Signals | null = null
  sandbox?: ShellSandboxInfo
  readonly done: Promise<void>

  private readonly handle: SubprocessHandle
  private readonly offsets = { stdout: 0, stderr: 0 }
  private failureNote: string | undefined
  private killRequested = false

  constructor(executor: LocalShellExecutor, runtime: SubprocessRuntime, spec: ShellExecSpec) {
    // Confinement errors surface synchronously: nothing is started without its sandbox.
    const prepared: PreparedSpawn = executor.prepare(spec, {
      signal: spec.signal,
      supervise: true,
      stdoutMaxBytes: executor.config.maxOutputBytes,
    })
    this.handle = runtime.spawn(prepared.spec)
    this.done = this.handle.done.then(
      (outcome) => {
        this.exitCode = outcome.exitCode
        this.signal = outcome.signal
        const stderr = this.handle.collected.stderr?.readFrom(0).text ?? ''
        this.stamp(executor.factsOf(prepared, outcome.exitCode, stderr, spec))
        this.status = outcome.signal !== null || this.killRequested ? 'killed' : 'completed'
      },
      (error: unknown) => {
        const runnerFailed = prepared.plan !== undefined && isRunnerFailure(error)
        const surfaced =
          prepared.plan && isSpawnError(error) ? runnerFailureToError(error, prepared.plan.policy.mode) : error
        this.failureNote = `spawn failed: ${surfaced instanceof Error ? surfaced.message : String(surfaced)}`
        this.stamp(executor.factsOf(prepared, null, '', spec, runnerFailed))
        this.status = 'killed'
      },
    )
  }

  private stamp(facts: ShellSandboxInfo | undefined): void {
    // danger-full-access in the background carries no sandbox field at all (reference §1.6).
    if (facts && facts.mode !== 'danger-full-access') this.sandbox = facts
  }

  /** Output since the previous read (consuming); stderr in a marked `[stderr]` section. */
  readOutput(): ShellProcessRead {
    const out = this.handle.collected.stdout?.readFrom(this.offsets.stdout)
    const err = this.handle.collected.stderr?.readFrom(this.offsets.stderr)
    if (out) this.offsets.stdout = out.nextOffset
    if (err) this.offsets.stderr = err.nextOffset
    let delta = out?.text ?? ''
    if (err && err.text !== '') delta += `${delta === '' || delta.endsWith('\n') ? '' : '\n'}[stderr]\n${err.text}`
    if (this.failureNote !== undefined) {
      delta += `${delta === '' || delta.endsWith('\n') ? '' : '\n'}${this.failureNote}`
      this.failureNote = undefined
    }
    const read: ShellProcessRead = { delta, lossy: (out?.lossy ?? false) || (err?.lossy ?? false) }
    if (out?.lossy && out.spillPath) read.stdoutSpillPath = out.spillPath
    if (err?.lossy && err.spillPath) read.stderrSpillPath = err.spillPath
    return read
  }

  /** Terminates the whole supervised tree; true the first time while running, false after. */
  kill(): boolean {
    if (this.status !== 'running' || this.killRequested) return false
    this.killRequested = true
    this.handle.terminate()
    return true
  }
}
