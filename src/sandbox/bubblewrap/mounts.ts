/** bubblewrap's layered mounts for one plan: the read view's masks, the protected set, socket masks, the session's dirs. */
import fs from 'node:fs'
import { privateEmptyFile } from '../../subprocess/private-dirs/layout.js'
import type { PlanRequest } from '../confinement/request.js'
import type { BubblewrapMounts } from '../view/mounts.js'
import { dirsBetween } from '../view/protected-paths.js'
import type { HiddenMount } from '../view/read-view.js'
import { socketMasksFor } from '../view/socket-masks.js'

/** The /proc files that list the kernel keys of the user, masked under bubblewrap. */
const PROC_KEY_FILES: readonly HiddenMount[] = ['/proc/keys', '/proc/key-users']
  .filter((p) => fs.existsSync(p))
  .map((p) => ({ kind: 'file' as const, path: p }))

/** The mounts bwrap lays for `request` (bwrap runs as the owner then: a place the owner cannot reach gets none). */
export function bubblewrapMounts(request: PlanRequest): BubblewrapMounts {
  const { policy, snapshot, grants, session, owner, hostEnv, reachable } = request
  const sockets = socketMasksFor(policy.allowUnixSockets ?? [], hostEnv)
  const hidden = snapshot.mounts.filter((m) => reachable(m.path))
  return {
    anchors: dirsBetween(
      hidden.map((m) => m.path),
      grants.writable.filter((w) => w.kind === 'root' || w.kind === 'extra').map((w) => w.path),
    ),
    // /proc/keys lists the names of the user's keys: bwrap's /proc gets it emptied too.
    hidden: [...hidden, ...PROC_KEY_FILES],
    protected: request.protectedSet,
    socketMasks: sockets.masks.filter(reachable),
    keep: [...sockets.keep.filter(reachable), session.spill],
    emptyFile: privateEmptyFile(hostEnv, owner),
    shm: session.shm,
  }
}
