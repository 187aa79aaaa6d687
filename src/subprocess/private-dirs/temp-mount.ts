/**
 * A session's TMPDIR and /dev/shm on one size-bounded tmpfs. Only a root host can mount one: in
 * its own mount namespace, over the session's `m/` right after that is made (before any plan
 * pins an inode in it, before anything is in it), detached before the session dir is removed.
 * Every run of the sandbox sees it: bwrap binds from it in the host's namespace, Landlock's
 * launcher stays in it (src/subprocess/launcher/launch.ts), so its contents are kept across runs
 * on both backends.
 */
import fs from 'node:fs'
import path from 'node:path'
import { loadNative, type NativeAddon } from '../native.js'

let refused: string | undefined

/** Why this host mounts no tmpfs over a session's TMPDIR (undefined: it does). */
export function tempMountRefusal(): string | undefined {
  if (refused !== undefined) return refused
  if (process.platform !== 'linux') return 'not Linux'
  if (process.getuid?.() !== 0) return 'the host is not root (mount needs CAP_SYS_ADMIN in its mount namespace)'
  return addon() === undefined ? 'the native addon is not loaded' : undefined
}

function addon(): NativeAddon | undefined {
  try {
    return loadNative()
  } catch {
    return undefined
  }
}

/**
 * Mounts a tmpfs of `bytes` over the empty directory `dir` (mode 0700, owned by `owner` or this
 * process); false, and no later mount tried, when the kernel refuses.
 */
export function mountTemp(dir: string, bytes: number, owner?: { uid: number; gid: number }): boolean {
  const native = tempMountRefusal() === undefined ? addon() : undefined
  if (native === undefined) return false
  const rc = native.tmpfsMount(dir, bytes, owner?.uid ?? 0, owner?.gid ?? 0, false)
  if (rc !== 0) refused = `mount(2) of a tmpfs failed (errno ${-rc})`
  return rc === 0
}

/** Gives the tmpfs over `dir` a new size (contents kept); false when the kernel refuses (more is in it). */
export function resizeTemp(dir: string, bytes: number): boolean {
  return addon()?.tmpfsMount(dir, bytes, 0, 0, true) === 0
}

/** How many mounts are stacked at `dir` in this mount namespace (from /proc/self/mountinfo). */
export function mountsAt(dir: string): number {
  let info: string
  try {
    info = fs.readFileSync('/proc/self/mountinfo', 'utf8')
  } catch {
    return 0
  }
  const escaped = dir.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`)
  return info.split('\n').filter((line) => line.split(' ')[4] === escaped).length
}

/** Whether `dir` is a mount point (another device than its parent's: the tmpfs). */
export function isMountPoint(dir: string): boolean {
  try {
    return fs.lstatSync(dir).dev !== fs.lstatSync(path.dirname(dir)).dev
  } catch {
    return false
  }
}

/** Detaches the tmpfs over `dir` and the bind beneath it, when they are there (a run still in it keeps it until it ends). */
export function detachTemp(dir: string): void {
  const native = addon()
  for (let n = mountsAt(dir); n > 0 && native !== undefined; n--) if (native.detachMount(dir) !== 0) return
}
