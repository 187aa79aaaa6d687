/**
 * The read view and the protected set as bubblewrap lays them: the mounts of one plan, described
 * as data (the argv builder, sandbox/bubblewrap/argv.ts, turns them into bwrap arguments).
 */
import type { ProtectedSet } from './protected-paths.js'
import type { HiddenMount } from './read-view.js'

/** The layered mounts of a plan beyond the writable grants (all paths canonical). */
export interface BubblewrapMounts {
  hidden: readonly HiddenMount[]
  protected: ProtectedSet
  /** Directories whose host unix sockets are masked by an empty tmpfs. */
  socketMasks: readonly string[]
  /** Paths bound back read-only (allowed sockets, resolv.conf under a mask, the session's spill dir). */
  keep: readonly string[]
  /** An empty, read-only file laid over hidden files. */
  emptyFile: string
  /** The session's own dir bound writable at /dev/shm (POSIX shared memory and semaphores). */
  shm?: string | undefined
  /**
   * Directories inside writable roots above a hidden path, bound in place: a mount point cannot be
   * renamed, so a hidden path's mask cannot be moved away with its parent.
   */
  anchors?: readonly string[] | undefined
}
