/**
 * Paths a confined run must not leave behind: a protected file no mount can hold because it does
 * not exist yet (git refuses an empty `commondir`, so nothing can be laid there in advance). Once
 * the run's whole tree is gone, each that appeared is moved aside to `<path>.cordon-refused-<ms>`
 * — kept for the person to see, never read by git — and reported as a denial. Symlinks that must
 * stay (`node_modules/.bin/cordon`, what `npx cordon` runs) are made again where the run changed them.
 */
import fs from 'node:fs'
import { removeTreeSync } from './remove-tree.js'

/** The paths of `paths` that exist now, each moved aside (or removed when it cannot be). */
export function takeAwayAppeared(paths: readonly string[]): string[] {
  const out: string[] = []
  for (const p of paths) {
    try {
      fs.lstatSync(p)
    } catch {
      continue
    }
    moveAside(p)
    out.push(p)
  }
  return out
}

/** The links of `links` that no longer point at their target, each moved aside and made again. */
export function restoreLinks(links: ReadonlyArray<{ path: string; target: string }>): string[] {
  const out: string[] = []
  for (const { path, target } of links) {
    let now: string | undefined
    try {
      now = fs.readlinkSync(path)
    } catch {
      now = undefined
    }
    if (now === target) continue
    if (now !== undefined || fs.existsSync(path)) moveAside(path)
    try {
      fs.symlinkSync(target, path)
    } catch {
      // its directory is gone too: the next install makes it again
    }
    out.push(path)
  }
  return out
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
