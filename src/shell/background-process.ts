/**
 * A background command (`start`): supervised so a daemon it starts cannot outlive `kill()`, no
 * timeout, output read incrementally and consumed, facts stamped before `done` resolves.
 * `start` never throws for a cancellation and `done` never rejects: an already-aborted signal
 * or a failed spawn settles `killed`, with the reason once in the `[stderr]` section.
 */
import { isSpawnError } from '../policy/errors.js'
import { isRunnerFailure, runnerFailureToError } from '../sandbox/verdict.js'
import type { SubprocessRuntime } from '../subprocess/runtime.js'
import type { SubprocessHandle } from '../subprocess/types.js'
import type { PreparedSpawn, SpawnPreparer } from './prepared-spawn.js'
import { abortedBeforeSpawnText, spawnFailureText } from './spawn-failure.js'
import type { ShellExecSpec, ShellProcess, ShellProcessRead, ShellProcessStatus, ShellSandboxInfo } from './types.js'

/** The ShellProcess of one `start()`: see the seed's contract for each member. */
export class BackgroundShellProcess implements ShellProcess {
  status: ShellProcessStatus = 'running'
  exitCode: number | null = null
  signal: NodeJS.Signals | null = null
  sandbox?: ShellSandboxInfo
  readonly done: Promise<void>

  /** Absent when nothing was spawned (the signal had already aborted). */
  private readonly handle: SubprocessHandle | undefined
  private readonly offsets = { stdout: 0, stderr: 0 }
  /** Why the command never ran, shown once in the `[stderr]` section. */
  private failureNote: string | undefined
  private killRequested = false
  /** The caller's signal aborted while the job ran: the seed calls that killed, whatever the exit. */
  private aborted = false

  constructor(executor: SpawnPreparer, runtime: SubprocessRuntime, spec: ShellExecSpec) {
    // Cancelled before it started: nothing spawns, and no sandbox is asked (a cancellation, not a sandbox error).
    if (spec.signal?.aborted) {
      this.handle = undefined
      this.failureNote = abortedBeforeSpawnText(spec.signal.reason)
      this.status = 'killed'
      this.done = Promise.resolve()
      return
    }
    // Confinement errors surface synchronously: nothing is started without its sandbox.
    const prepared: PreparedSpawn = executor.prepare(spec, {
      signal: spec.signal,
      supervise: true,
      stdoutMaxBytes: executor.config.maxOutputBytes,
    })
    const handle = runtime.spawn(prepared.spec)
    this.handle = handle
    const onAbort = () => {
      this.aborted = true
    }
    spec.signal?.addEventListener('abort', onAbort, { once: true })
    this.done = handle.done.then(
      (outcome) => {
        spec.signal?.removeEventListener('abort', onAbort)
        this.exitCode = outcome.exitCode
        this.signal = outcome.signal
        const stderr = handle.collected.stderr?.readFrom(0).text ?? ''
        const stdout = handle.collected.stdout?.readFrom(0).text ?? ''
        const facts = (refused = handle.refusedPaths) =>
          executor.factsOf(prepared, outcome.exitCode, stderr, spec, false, stdout, refused, handle.network)
        this.stamp(facts())
        // What appeared where it must not is taken away once, by the runtime when the tree is gone,
        // which a job's tree may be only after its command; the proxy's facts are final then too.
        if (prepared.plan && handle.refusedPaths === undefined) {
          void handle.waitForExit().then(() => {
            const refused = handle.refusedPaths
            if ((refused !== undefined && refused.length > 0) || handle.network !== undefined)
              this.stamp(facts(refused))
            executor.noteRun(spec, this.sandbox, true)
          })
        } else executor.noteRun(spec, this.sandbox, true)
        this.status = outcome.signal !== null || this.killRequested || this.aborted ? 'killed' : 'completed'
      },
      (error: unknown) => {
        spec.signal?.removeEventListener('abort', onAbort)
        const runnerFailed = prepared.plan !== undefined && isRunnerFailure(error)
        const surfaced =
          prepared.plan && isSpawnError(error) ? runnerFailureToError(error, prepared.plan.policy.mode) : error
        this.failureNote = spawnFailureText(surfaced)
        this.stamp(executor.factsOf(prepared, null, '', spec, runnerFailed))
        this.status = 'killed'
      },
    )
  }

  private stamp(facts: ShellSandboxInfo | undefined): void {
    // danger-full-access in the background carries no sandbox field at all (reference §1.6).
    if (facts && facts.mode !== 'danger-full-access') this.sandbox = facts
  }

  /** Output since the previous read (consuming); stderr, and why the command never ran, in a `[stderr]` section. */
  readOutput(): ShellProcessRead {
    const out = this.handle?.collected.stdout?.readFrom(this.offsets.stdout)
    const err = this.handle?.collected.stderr?.readFrom(this.offsets.stderr)
    if (out) this.offsets.stdout = out.nextOffset
    if (err) this.offsets.stderr = err.nextOffset
    let stderr = err?.text ?? ''
    if (this.failureNote !== undefined) {
      stderr += `${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${this.failureNote}\n`
      this.failureNote = undefined
    }
    let delta = out?.text ?? ''
    if (stderr !== '') delta += `${delta === '' || delta.endsWith('\n') ? '' : '\n'}[stderr]\n${stderr}`
    const read: ShellProcessRead = { delta, lossy: (out?.lossy ?? false) || (err?.lossy ?? false) }
    if (out?.lossy && out.spillPath) read.stdoutSpillPath = out.spillPath
    if (err?.lossy && err.spillPath) read.stderrSpillPath = err.spillPath
    return read
  }

  /** Terminates the whole supervised tree; true the first time while running, false after. */
  kill(): boolean {
    if (this.status !== 'running' || this.killRequested || this.handle === undefined) return false
    this.killRequested = true
    this.handle.terminate()
    return true
  }
}
