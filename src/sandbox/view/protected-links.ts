/**
 * The symlinks on the way to a protected path inside a writable root. bubblewrap binds a
 * protected path's target read-only, but a link on the way (`.vscode -> real`, `.envrc -> x`)
 * lies in the writable root: the run could replace it by a dir or file of its own, and what it
 * plants there is what an editor reads next. Such a link must stay (`mustStay`): after the run
 * it is made again if changed, and whatever took its place is moved aside
 * (`src/subprocess/process/must-not-appear.ts:restoreLinks`).
 */
import type fs from 'node:fs'
import { readlinkSync } from 'node:fs'
import path from 'node:path'
import { canonicalPath } from '../../policy/resolve.js'
import { within } from './read-view.js'

/** A symlink that must point where it does now once the run is over. */
export interface StayingLink {
  path: string
  target: string
}

/**
 * The symlinks between the deepest writable root lexically holding `lexical` and it, each named
 * under its real directory (the links before it resolved) with the target it names now; `stamp`
 * sees every component read, so that a link changed later makes the set stale.
 */
export function linksOnTheWay(
  lexical: string,
  roots: readonly string[],
  stamp: (p: string) => fs.Stats | undefined,
): StayingLink[] {
  const root = roots.filter((r) => within(lexical, r) && lexical !== r).sort((a, b) => b.length - a.length)[0]
  if (root === undefined) return []
  const out: StayingLink[] = []
  let dir = root
  for (const name of path.relative(root, lexical).split('/')) {
    const here = path.join(dir, name)
    const st = stamp(here)
    if (st === undefined) break
    if (!st.isSymbolicLink()) {
      dir = here
      continue
    }
    try {
      out.push({ path: here, target: readlinkSync(here) })
    } catch {
      break // changed meanwhile: the stamp makes the set stale
    }
    dir = canonicalPath(here)
  }
  return out
}
