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

/** The links on the way to a path, and where they lead (set only when there is a link). */
export interface Way {
  links: StayingLink[]
  /** The path with its links resolved, a dangling one too (what the run makes there, the link names). */
  resolved?: string
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
): Way {
  const root = roots.filter((r) => within(lexical, r) && lexical !== r).sort((a, b) => b.length - a.length)[0]
  if (root === undefined) return { links: [] }
  const links: StayingLink[] = []
  const parts = path.relative(root, lexical).split('/')
  let dir = root
  for (const [i, name] of parts.entries()) {
    const here = path.join(dir, name)
    const st = stamp(here)
    if (st === undefined) return wayOf(links, path.join(here, ...parts.slice(i + 1)))
    if (!st.isSymbolicLink()) {
      dir = here
      continue
    }
    let target: string
    try {
      target = readlinkSync(here)
    } catch {
      return wayOf(links, path.join(here, ...parts.slice(i + 1))) // changed meanwhile: the stamp tells
    }
    links.push({ path: here, target })
    const real = canonicalPath(here)
    // A dangling link leads where its target would be: what the run makes there, it names.
    dir = real === here ? canonicalPath(path.resolve(dir, target)) : real
  }
  return wayOf(links, dir)
}

const wayOf = (links: StayingLink[], resolved: string): Way => (links.length > 0 ? { links, resolved } : { links })
