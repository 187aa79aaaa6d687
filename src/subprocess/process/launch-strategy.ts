/**
 * What differs between the three launch kinds (launch-kind.ts), as one interface the handle
 * (managed-process.ts) talks to: how the run starts, how the command's exit is learnt, whether
 * the tree is gone, and how signals reach it. One strategy is made per run, once, from its kind
 * (direct.ts, launched.ts, wrapped.ts); the handle never branches on the kind itself.
 */
import type { SubprocessSpawnSpec } from '../types.js'
import type { Child, ChildExit } from './child.js'
import type { ChildSpawner } from './spawner.js'
import type { OutputPlan } from './stdio.js'

/** What a strategy is given about its run: the spec, the environment, the spawner, the output plan, the tree's state. */
export interface RunContext {
  readonly spec: SubprocessSpawnSpec
  /** The complete child environment, `K=V`. */
  readonly env: string[]
  readonly spawner: ChildSpawner
  readonly output: OutputPlan
  /** The run's cgroup.procs fds (src/subprocess/cgroup/leaf.ts), in controller order: they ride after the ruleset. */
  readonly cgroupFds: readonly number[]
  /** Marks the tree gone (idempotent): the handle then releases the run. */
  markTreeGone(): void
  /** Whether the tree is known to be gone. */
  isTreeGone(): boolean
}

/** One launch kind's part of a run. */
export interface LaunchStrategy {
  /** Starts the run (the tree's root); throws SpawnError before anything ran. */
  start(): Child
  /** The command's exit facts as this kind learns them (rejects with SpawnError when the command never ran). */
  commandExit(child: Child): Promise<ChildExit>
  /** Whether the tree is gone now, though nothing announced it (only an unsupervised group must be looked for). */
  treeGoneNow(child: Child): boolean
  /** Sends `signal` to the whole tree. */
  signalTree(child: Child, signal: NodeJS.Signals): void
  /** How long after SIGTERM the host sends its own SIGKILL. */
  killDelayMs(graceMs: number): number
  /** The host's own SIGKILL once that delay passed with the tree still there. */
  killAfterGrace(child: Child): void
  /** SIGKILL (or the nearest this kind has) to the whole tree at once (host exit, disposal after failure). */
  forceKill(child: Child): void
  /** Lets go of what the strategy holds once the tree is gone. */
  release(): void
}

/** Makes the strategy of one run. */
export type LaunchStrategyFactory = (run: RunContext) => LaunchStrategy
