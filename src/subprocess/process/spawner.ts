/**
 * How children start: the native addon (clone child, pidfds, the launcher) or node:child_process
 * (subprocess/portable/spawner.ts). Everything else a ManagedProcess does (collection, spill, exit facts,
 * termination, the wait for the tree) is the same for both.
 */
import { loadNative } from '../native.js'
import type { SubprocessSpawnSpec } from '../types.js'
import { type Child, type ChildOptions, startChild } from './child.js'
import { type LaunchKind, launchKindOf } from './launch-kind.js'

/** A process a wrapper named (its supervisor inside), held for signals until released. */
export interface PinnedProcess {
  signal(signal: number): void
  release(): void
}

/** A supervised run as a spawner without the native launcher starts it. */
export interface SupervisedLaunch {
  argv: readonly string[]
  env: readonly string[]
  cwd: string
  stdio: ChildOptions['stdio']
  graceMs: number
  background: boolean
  /** The spec carries a Landlock plan (only the native launcher can run it). */
  landlock: boolean
  onread: ChildOptions['onread']
}

/** How children start on one spawn path (see the module comment). */
export interface ChildSpawner {
  readonly path: 'native' | 'portable'
  /** The cordon-exec helper the spawner supervises with (portable), when one exists. */
  readonly helper?: string | undefined
  /** How `spec` starts on this spawner. */
  kindOf(spec: SubprocessSpawnSpec): LaunchKind
  /** Starts a direct or wrapped child; throws SpawnError before anything ran. */
  startChild(options: ChildOptions, kind: LaunchKind): Child
  /** Starts a launched run without the native launcher; absent: the native launcher runs it. */
  launch?(launch: SupervisedLaunch): Child
  /** Pins the supervisor a wrapper names by pid; undefined when it is already gone. */
  pin(pid: number): PinnedProcess | undefined
}

/** The native spawner: the addon's clone child, its launcher, pidfds. */
export const NATIVE_SPAWNER: ChildSpawner = {
  path: 'native',
  kindOf: launchKindOf,
  startChild,
  pin(pid) {
    const native = loadNative()
    const fd = native.pidfdOpen(pid)
    if (fd < 0) return undefined
    let open = true
    return {
      signal(signal) {
        if (open) native.pidfdSignal(fd, signal)
      },
      release() {
        if (open) native.closeFd(fd)
        open = false
      },
    }
  },
}
