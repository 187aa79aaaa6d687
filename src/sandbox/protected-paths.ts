/**
 * The protected paths of a policy that lie inside its writable roots — where "read-only" needs a
 * backend's help. Besides the policy's own: in every writable root that is a git checkout, the
 * places a planted file would run unconfined the next time the person uses git (`hooks/` and
 * `config` of the git dir, of every submodule's git dir under `modules/`, and for a worktree of
 * the common git dir, plus `config.worktree`), and the installed cordon package itself (a
 * command must not patch the engine that confines the next one).
 *
 * Mounts move with a renamed directory (`mv .git x && cp -a x .git` would shed a read-only bind
 * of `.git/hooks`), so bubblewrap also binds every directory between the writable root and a
 * protected path onto itself: a mount point cannot be renamed (EBUSY).
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SandboxGrants } from '../policy/grants.js'
import { canonicalPath } from '../policy/resolve.js'
import type { SandboxPolicy } from '../policy/vocabulary.js'
import { within } from './read-view.js'

/** One protected path inside a writable root. */
export interface ProtectedPath {
  path: string
  /** `missing-dir`: a hooks dir that does not exist yet (bubblewrap puts an empty read-only one there). */
  kind: 'dir' | 'file' | 'missing-dir'
  origin: 'policy' | 'git' | 'cordon'
}

/** The protected paths inside writable roots, and what keeps their ancestors in place. */
export interface ProtectedSet {
  paths: ProtectedPath[]
  /** Directories between a writable root and a protected path, parents first. */
  parents: string[]
  /** Paths whose state this set was read from, with their inode (0: absent), to notice a stale set. */
  stamps: Array<{ path: string; ino: number }>
}

/** The installed cordon package's root (works from `src/sandbox/` and `dist/sandbox/`). */
export const PACKAGE_ROOT = canonicalPath(fileURLToPath(new URL('../../', import.meta.url)))

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p)
  } catch {
    return undefined
  }
}

/** The git dirs of a checkout at `root`: its own, and the common one of a linked worktree. */
function gitDirsOf(
  root: string,
  stamp: (p: string) => fs.Stats | undefined,
): { own: string; common: string } | undefined {
  const dotGit = path.join(root, '.git')
  const st = stamp(dotGit)
  if (st === undefined) return undefined
  if (st.isDirectory()) return { own: dotGit, common: dotGit }
  if (!st.isFile()) return undefined
  let own: string
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'))
    if (!m) return undefined
    own = canonicalPath(path.resolve(root, m[1] as string))
  } catch {
    return undefined
  }
  let common = own
  try {
    common = canonicalPath(path.resolve(own, fs.readFileSync(path.join(own, 'commondir'), 'utf8').trim()))
  } catch {
    // No commondir: a submodule's git dir, or a plain gitdir file.
  }
  return { own, common }
}

/** `hooks/` and `config` of a git dir and of each submodule git dir beneath its `modules/`. */
function gitPlaces(gitDir: string, out: ProtectedPath[], stamp: (p: string) => fs.Stats | undefined, level = 0): void {
  out.push({ path: path.join(gitDir, 'hooks'), kind: 'dir', origin: 'git' })
  out.push({ path: path.join(gitDir, 'config'), kind: 'file', origin: 'git' })
  out.push({ path: path.join(gitDir, 'config.worktree'), kind: 'file', origin: 'git' })
  if (level > 4) return
  const modules = path.join(gitDir, 'modules')
  const walk = (dir: string, nesting: number) => {
    if (nesting > 4 || !stamp(dir)?.isDirectory()) return
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const sub = path.join(dir, name)
      if (!lstat(sub)?.isDirectory()) continue
      // A submodule's git dir holds HEAD; anything else is a level of a nested submodule name.
      if (lstat(path.join(sub, 'HEAD'))) gitPlaces(sub, out, stamp, level + 1)
      else walk(sub, nesting + 1)
    }
  }
  walk(modules, 0)
}

/** The protected paths of `policy` that lie inside its writable roots (root, extras). */
export function protectedSetFor(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  packageRoot: string = PACKAGE_ROOT,
): ProtectedSet {
  const stamps: ProtectedSet['stamps'] = []
  const stamp = (p: string) => {
    const st = lstat(p)
    stamps.push({ path: p, ino: st?.ino ?? 0 })
    return st
  }
  const roots = grants.writable.filter((w) => w.kind === 'root' || w.kind === 'extra').map((w) => w.path)
  const candidates: ProtectedPath[] = grants.protectedPaths.map((p) => ({ path: p, kind: 'file', origin: 'policy' }))
  if (policy.protectedDefaults !== false) {
    for (const root of roots) {
      const dirs = gitDirsOf(root, stamp)
      if (dirs === undefined) continue
      gitPlaces(dirs.own, candidates, stamp)
      if (dirs.common !== dirs.own) gitPlaces(dirs.common, candidates, stamp)
    }
    candidates.push({ path: packageRoot, kind: 'dir', origin: 'cordon' })
  }
  const paths: ProtectedPath[] = []
  const seen = new Set<string>()
  for (const c of candidates) {
    const p = canonicalPath(c.path)
    if (seen.has(p) || !roots.some((r) => within(p, r) && p !== r)) continue
    seen.add(p)
    const st = stamp(p)
    if (st === undefined) {
      // A missing hooks dir would let a command plant hooks: an empty read-only one goes there,
      // when its parent (the git dir) exists. Missing files stay missing (git reads none then).
      if (c.kind === 'dir' && c.origin === 'git' && lstat(path.dirname(p))?.isDirectory())
        paths.push({ path: p, kind: 'missing-dir', origin: c.origin })
      continue
    }
    if (st.isSymbolicLink()) continue // a mount would land on its target; the target is listed where it lies
    paths.push({ path: p, kind: st.isDirectory() ? 'dir' : 'file', origin: c.origin })
  }
  const parents = new Set<string>()
  for (const p of paths) {
    const root = roots.filter((r) => within(p.path, r)).sort((a, b) => b.length - a.length)[0] as string
    for (let dir = path.dirname(p.path); dir !== root && within(dir, root); dir = path.dirname(dir)) parents.add(dir)
  }
  const parentList = [...parents].sort((a, b) => a.split('/').length - b.split('/').length)
  return { paths, parents: parentList, stamps }
}

/** Whether a protected set still describes the file system (each stamped path's inode unchanged). */
export function protectedSetCurrent(set: ProtectedSet): boolean {
  return set.stamps.every((s) => (lstat(s.path)?.ino ?? 0) === s.ino)
}
