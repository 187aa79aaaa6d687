/**
 * Nested checkouts: the directories up to two levels below a writable root that hold a `.git`,
 * whose git places are protected like the root's own. The directories searched are stamped with
 * their mtime (taken before they are listed), so a checkout made in one between two runs makes the
 * protected set stale and the next run protects it. A `.git` made inside an existing directory
 * two levels down changes no searched directory: that one is found at the next plan only.
 */
import fs from 'node:fs'
import path from 'node:path'

/** A searched directory and its mtime (ns) when it was listed. */
export interface DirStamp {
  dir: string
  mtime: bigint
}

/** Directories never searched for nested checkouts (large, and never a project's own repository). */
const NOT_CHECKOUTS = new Set([
  'node_modules',
  '.git',
  'target',
  'dist',
  'build',
  'vendor',
  '.venv',
  'venv',
  '__pycache__',
])

function mtimeOf(dir: string): bigint | undefined {
  return fs.lstatSync(dir, { bigint: true, throwIfNoEntry: false })?.mtimeNs
}

function isDirectory(p: string): boolean {
  return fs.lstatSync(p, { throwIfNoEntry: false })?.isDirectory() === true
}

/**
 * The root and the directories up to two levels below it that hold a `.git`; `stamp` records each
 * `.git` found, `searched` each directory listed.
 */
export function checkoutsIn(root: string, stamp: (p: string) => unknown, searched: DirStamp[]): string[] {
  const out = [root]
  const visit = (dir: string, level: number) => {
    if (level > 2) return
    const mtime = mtimeOf(dir)
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      return
    }
    if (mtime !== undefined) searched.push({ dir, mtime })
    for (const name of names) {
      if (NOT_CHECKOUTS.has(name) || name.startsWith('.')) continue
      const sub = path.join(dir, name)
      if (!isDirectory(sub)) continue
      if (fs.lstatSync(path.join(sub, '.git'), { throwIfNoEntry: false })) {
        stamp(path.join(sub, '.git'))
        out.push(sub)
      }
      visit(sub, level + 1)
    }
  }
  visit(root, 1)
  return out
}

/** Whether no searched directory changed its names since it was listed. */
export function unchangedDirs(searched: readonly DirStamp[]): boolean {
  for (const s of searched) {
    try {
      if (mtimeOf(s.dir) !== s.mtime) return false
    } catch {
      return false
    }
  }
  return true
}
