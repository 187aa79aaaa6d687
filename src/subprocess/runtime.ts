/**
 * The subprocess service (seed 003): the abstract seam, and the local implementation over the
 * native spawn core. Defaults live with the callers; this floor applies none.
 */
import { InvalidRequestError } from '../policy/errors.js'
import { envToArray, mergeEnv, scrubbedParentEnv } from './env.js'
import { ManagedProcess } from './managed-process.js'
import { helperPath } from './native.js'
import { resolveExecutable } from './resolve-executable.js'
import { validateSpawnSpec } from './spec-schema.js'
import { SpillDirectory } from './spill-dir.js'
import type { SubprocessHandle, SubprocessSpawnSpec } from './types.js'

/** The abstract seam: a remote runtime (a pod, a microVM) implements the same three verbs. */
export abstract class SubprocessRuntime {
  /** A canonical executable path for `command` in this runtime's execution world. */
  abstract resolveExecutable(
    command: string,
    env?: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<string>
  /** Starts one managed process tree from a fully-specified spec; returns its live handle at once. */
  abstract spawn(spec: SubprocessSpawnSpec): SubprocessHandle
  /** Terminates every live tree and waits for each to be gone. */
  abstract dispose(): Promise<void>
}

/** Options of the local runtime. */
export interface LocalSubprocessRuntimeOptions {
  /** Parent directory of the private spill directory (default: the OS temp dir). */
  spillDir?: string
  /** Keep spill files after dispose (default: removed). */
  keepSpills?: boolean
}

/** Runtimes alive in this host, for the synchronous exit hook. */
const liveRuntimes = new Set<LocalSubprocessRuntime>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // Prepended so it runs before other exit listeners; synchronous, as 'exit' requires.
  process.prependListener('exit', () => {
    for (const runtime of liveRuntimes) runtime.killAllNow()
  })
}

/** Spawns on this host: native clone-based children, each leading its own session. */
export class LocalSubprocessRuntime extends SubprocessRuntime {
  private readonly spills: SpillDirectory
  private readonly live = new Set<ManagedProcess>()
  private disposed = false

  constructor(options: LocalSubprocessRuntimeOptions = {}) {
    super()
    this.spills = new SpillDirectory({ parent: options.spillDir, keep: options.keepSpills })
    SpillDirectory.sweepStale(options.spillDir)
    liveRuntimes.add(this)
    installExitHook()
  }

  /** A canonical path to an executable `command` (absolute, or a bare name on the scrubbed PATH). */
  resolveExecutable(command: string, env?: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<string> {
    return resolveExecutable(command, env, signal)
  }

  /** Validates synchronously (nothing spawned on a bad spec) and returns the live handle. */
  spawn(spec: SubprocessSpawnSpec): SubprocessHandle {
    if (this.disposed) throw new InvalidRequestError(['runtime: disposed; create a new LocalSubprocessRuntime'])
    validateSpawnSpec(spec)
    if (spec.signal?.aborted) {
      const reason: unknown = spec.signal.reason
      throw new Error(
        `aborted before spawn: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`,
        { cause: reason },
      )
    }
    const helper = spec.supervise ? helperPath() : undefined
    if (spec.supervise && helper === undefined) {
      throw new InvalidRequestError(['supervise: the cordon-exec helper was not built (run `npm run build:native`)'])
    }
    const env = envToArray(mergeEnv(scrubbedParentEnv(), spec.env))
    const handle = new ManagedProcess({
      spec,
      env,
      helper,
      spillDir: () => this.spills.path(),
      onTreeGone: (p) => {
        this.live.delete(p)
        p.detach(spec.signal)
      },
    })
    if (!handle.gone) this.live.add(handle)
    return handle
  }

  /** Terminates every live tree, waits until each is gone, then removes the spill files. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    const handles = [...this.live]
    for (const h of handles) h.terminate()
    await Promise.all(
      handles.map(async (h) => {
        await h.done.catch(() => undefined)
        await h.waitForExit()
      }),
    )
    this.spills.dispose()
    liveRuntimes.delete(this)
  }

  /** Synchronous SIGKILL of every live tree (the host is exiting). */
  killAllNow(): void {
    for (const h of this.live) h.forceKill()
  }

  /** Synchronous disposal for a host that is exiting: SIGKILL every live tree, remove the spill files. */
  disposeNow(): void {
    this.killAllNow()
    this.disposed = true
    this.spills.dispose()
    liveRuntimes.delete(this)
  }

  /** How many trees this runtime still owns. */
  get liveCount(): number {
    return this.live.size
  }
}
