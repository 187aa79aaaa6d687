/**
 * Paths a confined run must not leave behind: a protected file no mount can hold because it does
 * not exist yet (git refuses an empty `commondir`, so nothing can be laid there in advance). Once
 * the run's whole tree is gone, each that appeared is moved aside to `<path>.cordon-refused-<ms>`
 * — kept for the person to see, never read by git — and reported as a denial. Symlinks that must
 * stay (`node_modules/.bin/cordon`, what `npx cordon` runs) are made again where the run changed them.
 *
 * The run could make a directory on the way a link (`node_modules/.bin` -> a host dir, or a dir of
 * its own holding a `cordon` that names its code): each path is acted on inside its directory
 * opened without following a link and checked to be where it was planned, never through a link
 * (a link on the way is itself what the run left, and is moved aside).
 */
import fs from 'node:fs'
import path from 'node:path'
import { removeTreeSync } from '../private-dirs/remove-tree.js'

/** The paths of `paths` that exist now, each moved aside (or removed when it cannot be). */
export function takeAwayAppeared(paths: readonly string[]): string[] {
  const out: string[] = []
  for (const p of paths) {
    let appeared = false
    const checked = inRealDir(path.dirname(p), (at) => {
      const here = path.join(at, path.basename(p))
      if (lstat(here) === undefined) return
      moveAside(here)
      appeared = true
    })
    // Its directory is not the one planned: a link on the way, made by the run, goes instead.
    if (!checked) appeared = takeAwayLinkAbove(p)
    if (appeared) out.push(p)
  }
  return out
}

/** The links of `links` that no longer point at their target, each moved aside and made again. */
export function restoreLinks(links: ReadonlyArray<{ path: string; target: string }>): string[] {
  const out: string[] = []
  for (const { path: p, target } of links) {
    let changed = false
    const restore = (at: string) => {
      const here = path.join(at, path.basename(p))
      let now: string | undefined
      try {
        now = fs.readlinkSync(here)
      } catch {
        now = undefined
      }
      if (now === target) return
      changed = true
      if (now !== undefined || lstat(here) !== undefined) moveAside(here)
      try {
        fs.symlinkSync(target, here)
      } catch {
        // not made: the next install makes it again
      }
    }
    const dir = path.dirname(p)
    if (!inRealDir(dir, restore) && takeAwayLinkAbove(p)) {
      // The link's directory was a link of the run's: made again as a directory, with the link.
      changed = true
      inRealDir(path.dirname(dir), (at) => {
        try {
          fs.mkdirSync(path.join(at, path.basename(dir)))
        } catch {
          // its parent is gone too: the next install makes it again
        }
      })
      inRealDir(dir, restore)
    }
    if (changed) out.push(p)
  }
  return out
}

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p)
  } catch {
    return undefined
  }
}

const HAS_PROC_FD = fs.existsSync('/proc/self/fd')

/**
 * Calls `use` with a path naming the directory `dir` by an open descriptor (no link followed at
 * its end, and the kernel's name for it is `dir`: no link above it either); false, without the
 * call, when `dir` is not a real directory at that path now.
 */
function inRealDir(dir: string, use: (at: string) => void): boolean {
  if (!HAS_PROC_FD) {
    // No descriptor paths (not Linux): checked by name only.
    try {
      if (fs.realpathSync(dir) !== dir || !fs.lstatSync(dir).isDirectory()) return false
    } catch {
      return false
    }
    use(dir)
    return true
  }
  let fd: number
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW)
  } catch {
    return false
  }
  try {
    const at = `/proc/self/fd/${fd}`
    if (fs.readlinkSync(at) !== dir) return false
    use(at)
    return true
  } catch {
    return false
  } finally {
    fs.closeSync(fd)
  }
}

/** Moves aside the nearest symlink among `p`'s ancestors (the run made it: the paths are canonical); true when one was. */
function takeAwayLinkAbove(p: string): boolean {
  for (let dir = path.dirname(p); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    let moved = false
    const checked = inRealDir(path.dirname(dir), (at) => {
      const here = path.join(at, path.basename(dir))
      if (!lstat(here)?.isSymbolicLink()) return
      moveAside(here)
      moved = true
    })
    if (checked) return moved
  }
  return false
}

/** Moves `p` to `<p>.cordon-refused-<ms>` for the person to see (removed when it cannot be moved). */
function moveAside(p: string): void {
  try {
    fs.renameSync(p, `${p}.cordon-refused-${Date.now()}`)
  } catch {
    // A confined job still running may be changing it: removed without following a link.
    removeTreeSync(p)
  }
}
