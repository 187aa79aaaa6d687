/**
 * The subprocess service (seed 003): the abstract seam, and the local implementation over the
 * native spawn core, or, where the addon cannot load (or a caller forces it), over
 * node:child_process with the same spec, handle and facts (portable/spawn-path.ts). Defaults
 * live with the callers; this floor applies none.
 */
import { AbortedError, InvalidRequestError } from '../policy/errors.js'
import { envToArray, mergeEnv, scrubbedParentEnv } from './env/scrub.js'
import { ManagedProcess } from './process/managed-process.js'
import { type ChildSpawner, NATIVE_SPAWNER } from './process/spawner.js'
import {
  chooseSpawnPath,
  processSpawnPath,
  type SpawnPathChoice,
  type SpawnPathRequest,
} from './portable/spawn-path.js'
import { portableSpawner } from './portable/spawner.js'
import { resolveExecutable } from './resolve-executable.js'
import { validateSpawnSpec } from './spec/schema.js'
import { SpillDirectory } from './private-dirs/spill-dir.js'
import type { LocalTerminal } from './terminal/local-terminal.js'
import { spawnLocalTerminal } from './terminal/spawn.js'
import { isTerminalCleanupError, TerminalCleanupError } from './terminal/errors.js'
import { loadPty, type PtyLoader } from './terminal/pty.js'
import type {
  SubprocessHandle,
  SubprocessSpawnSpec,
  SubprocessTerminalHandle,
  SubprocessTerminalSpawnSpec,
} from './types.js'

/** The abstract seam: a remote runtime (a pod, a microVM) implements the same verbs. */
export abstract class SubprocessRuntime {
  /** A canonical executable path for `command` in this runtime's execution world. */
  abstract resolveExecutable(
    command: string,
    env?: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<string>
  /** Starts one managed process tree from a fully-specified spec; returns its live handle at once. */
  abstract spawn(spec: SubprocessSpawnSpec): SubprocessHandle
  /**
   * Allocates a real terminal and starts one owned process session on it: the only non-pipe
   * primitive. Resolves with the live handle once the allocation succeeded.
   */
  abstract spawnTerminal(spec: SubprocessTerminalSpawnSpec): Promise<SubprocessTerminalHandle>
  /** Terminates every live tree and terminal session and waits for each to be gone. */
  abstract dispose(): Promise<void>
}

/** Options of the local runtime. */
export interface LocalSubprocessRuntimeOptions {
  /** Parent directory of the private spill directory (default: the OS temp dir). */
  spillDir?: string
  /** Keep spill files after dispose (default: removed). */
  keepSpills?: boolean
  /** Loads the terminal backend for spawnTerminal (default: the optional dependency node-pty, imported lazily). */
  loadPty?: PtyLoader
  /**
   * The spawn path: `native` (the addon; throws NativeLoadError where it does not load),
   * `portable` (node:child_process), or `auto` (default: `CORDON_SPAWN`, else native where the
   * addon loads). A Landlock-confined spec fails closed on the portable path.
   */
  spawnPath?: SpawnPathRequest | undefined
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

/** Spawns on this host: native clone-based children (or portable ones), each leading its own session. */
export class LocalSubprocessRuntime extends SubprocessRuntime {
  private readonly spills: SpillDirectory
  private readonly live = new Set<ManagedProcess>()
  private readonly terminals = new Set<LocalTerminal>()
  private readonly loadPty: PtyLoader
  private readonly spawner: ChildSpawner
  /** The spawn path this runtime uses, and why. */
  readonly spawnPath: SpawnPathChoice
  private disposed = false

  constructor(options: LocalSubprocessRuntimeOptions = {}) {
    super()
    this.spills = new SpillDirectory({ parent: options.spillDir, keep: options.keepSpills })
    try {
      SpillDirectory.sweepStale(options.spillDir)
    } catch {
      // No private directory yet: nothing to sweep; the first spill reports why.
    }
    this.loadPty = options.loadPty ?? loadPty
    this.spawnPath =
      options.spawnPath === undefined || options.spawnPath === 'auto'
        ? processSpawnPath()
        : chooseSpawnPath(options.spawnPath)
    this.spawner = this.spawnPath.path === 'native' ? NATIVE_SPAWNER : portableSpawner(this.spawnPath.helper)
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
    if (spec.signal?.aborted) throw new AbortedError(spec.signal.reason)
    const env = envToArray(mergeEnv(scrubbedParentEnv(process.env, spec.environment ?? 'scrubbed'), spec.env))
    const handle = new ManagedProcess({
      spec,
      kind: this.spawner.kindOf(spec),
      spawner: this.spawner,
      env,
      spillDir: () => this.spills.path(),
      onTreeGone: (p) => {
        this.live.delete(p)
        p.detach(spec.signal)
      },
    })
    if (!handle.gone) this.live.add(handle)
    return handle
  }

  /** Allocates a pty (node-pty) and starts `spec.argv` as its session leader; see terminal/spawn.ts. */
  async spawnTerminal(spec: SubprocessTerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    if (this.disposed) throw new InvalidRequestError(['runtime: disposed; create a new LocalSubprocessRuntime'])
    return spawnLocalTerminal(spec, {
      loadPty: this.loadPty,
      // Checked again after the asynchronous load: dispose() may have started meanwhile.
      beforeFork: () => {
        if (this.disposed) throw new InvalidRequestError(['runtime: disposed; create a new LocalSubprocessRuntime'])
      },
      afterFork: (terminal) => this.terminals.add(terminal),
      onGone: (terminal) => this.terminals.delete(terminal),
    })
  }

  /**
   * Terminates every live tree and terminal session, waits until each is gone, then removes the
   * spill files. Rejects with one TerminalCleanupError naming every survivor of every terminal
   * (after a synchronous SIGKILL to them); the runtime is disposed all the same.
   */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    const handles = [...this.live]
    for (const h of handles) h.terminate()
    const terminals = [...this.terminals]
    const [, settled] = await Promise.all([
      Promise.all(
        handles.map(async (h) => {
          await h.done.catch(() => undefined)
          await h.waitForExit()
        }),
      ),
      Promise.allSettled(terminals.map((t) => t.terminate())),
    ])
    this.spills.dispose()
    liveRuntimes.delete(this)
    const failures = settled.flatMap((r, i) =>
      r.status === 'rejected' ? [{ error: r.reason, terminal: terminals[i]! }] : [],
    )
    if (failures.length === 0) return
    for (const { terminal } of failures) terminal.forceKillNow()
    const pids = failures.flatMap(({ error }) => (isTerminalCleanupError(error) ? error.pids : []))
    throw new TerminalCleanupError(pids, { cause: new AggregateError(failures.map((f) => f.error)) })
  }

  /** Synchronous SIGKILL of every live tree and terminal session (the host is exiting). */
  killAllNow(): void {
    for (const h of this.live) h.forceKill()
    for (const t of this.terminals) t.forceKillNow()
  }

  /** Synchronous disposal for a host that is exiting: SIGKILL every live tree, remove the spill files. */
  disposeNow(): void {
    this.killAllNow()
    this.disposed = true
    this.spills.dispose()
    liveRuntimes.delete(this)
  }

  /** How many trees and terminal sessions this runtime still owns. */
  get liveCount(): number {
    return this.live.size + this.terminals.size
  }
}
