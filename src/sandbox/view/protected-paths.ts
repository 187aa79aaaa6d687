/**
 * The protected paths of a policy that lie inside its writable roots — where "read-only" needs a
 * backend's help. Besides the policy's own: in every writable root that is a git checkout, the
 * places a planted file would run unconfined the next time the person uses git (`hooks/` and
 * `config` of the git dir, of every submodule's git dir under `modules/`, and for a worktree of
 * the common git dir, plus `config.worktree`), the installed cordon package itself (a
 * command must not patch the engine that confines the next one), and the files editors, agents
 * and shells run without asking (`profiles/protected.json` through
 * `src/policy/profiles/protected-defaults.ts`). The policy's `unprotectedPaths` opt defaults out; a
 * missing default or policy-named path must not appear.
 *
 * What git reads besides: the `.git` file of a linked worktree (it names the git dir), the
 * `core.hooksPath` dir and every `include.path`/`includeIf.*.path` file a protected config names,
 * and the same for checkouts nested up to two directories below a writable root. A `commondir`
 * file that does not exist cannot be mounted over (git refuses an empty one): it is a path that
 * must not appear, checked once the run's tree is gone (`mustNotAppear`). The dependencies the
 * cordon package loads (zod, node-gyp-build, node-pty) are protected with it, and every place Node
 * would look for one first (`node_modules/node-pty` in the workspace when node-pty is not
 * installed) must not appear: that is checked when the run is over, so a host that loads the
 * module while the run still goes could load a planted one.
 *
 * Mounts move with a renamed directory (`mv .git x && cp -a x .git` would shed a read-only bind
 * of `.git/hooks`), so bubblewrap also binds every directory between the writable root and a
 * protected path onto itself: a mount point cannot be renamed (EBUSY).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { SandboxGrants } from '../../policy/grants.js'
import { PACKAGE_ROOT as PACKAGE_DIR } from '../../policy/package-root.js'
import { isUnprotected, protectedDefaultPlaces, unprotectedOf } from '../../policy/profiles/protected-defaults.js'
import { canonicalPath } from '../../policy/resolve.js'
import type { SandboxPolicy } from '../../policy/vocabulary.js'
import { checkoutsIn, type DirStamp, unchangedDirs } from './nested-checkouts.js'
import { linksOnTheWay } from './protected-links.js'
import { within } from './read-view.js'

/** One protected path inside a writable root. */
export interface ProtectedPath {
  path: string
  /** `missing-dir`: a hooks dir that does not exist yet (bubblewrap puts an empty read-only one there). */
  kind: 'dir' | 'file' | 'missing-dir'
  /** `default`: an entry of `profiles/protected.json` (editor, agent and shell files). */
  origin: 'policy' | 'git' | 'cordon' | 'default'
}

/** The protected paths inside writable roots, and what keeps their ancestors in place. */
export interface ProtectedSet {
  paths: ProtectedPath[]
  /** Directories between a writable root and a protected path, parents first. */
  parents: string[]
  /** Paths whose state this set was read from, with their inode (0: absent), to notice a stale set. */
  stamps: Array<{ path: string; ino: number }>
  /** Directories searched for nested checkouts, with their mtime then: a checkout made in one makes the set stale. */
  searched?: DirStamp[]
  /** Paths inside writable roots that must not exist after the run (a planted `commondir` would redirect git). */
  mustNotAppear?: string[]
  /** Symlinks inside writable roots that must point where they do after the run (npm's `.bin/cordon`). */
  mustStay?: Array<{ path: string; target: string }>
}

/** The installed cordon package's root, symlinks resolved. */
export const PACKAGE_ROOT = canonicalPath(PACKAGE_DIR)

function lstat(p: string): fs.Stats | undefined {
  try {
    // No exception for a missing path (most protected places do not exist): a plan lists many.
    return fs.lstatSync(p, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/**
 * The home (canonical) when a writable root holds it, else undefined: `~` defaults count only
 * then (checkRoots refuses a root that is or holds the home today, so this guards a later change).
 */
function homeInRoots(roots: readonly string[], home: string | undefined): string | undefined {
  const dir = canonicalPath(home ?? process.env.HOME ?? os.homedir())
  return roots.some((r) => within(dir, r)) ? dir : undefined
}

function followed(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p, { throwIfNoEntry: false })
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
  // A `.git` symlink is followed: its places are named through it, so the link must stay too.
  const seen = stamp(dotGit)
  const st = seen?.isSymbolicLink() ? followed(dotGit) : seen
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

/**
 * The package and its dependencies, protected whatever the policy says: the host runs them next
 * (src/sandbox/view/host-programs.ts moves such a plan to a backend that binds them read-only).
 */
function packagePlaces(packageRoot: string, candidates: ProtectedPath[], mustNotAppear: string[]): void {
  candidates.push({ path: packageRoot, kind: 'dir', origin: 'cordon' })
  const deps = dependencyPlaces(packageRoot)
  for (const dep of deps.found) candidates.push({ path: dep, kind: 'dir', origin: 'cordon' })
  // Where Node would look for a dependency before (or instead of) where it is: a module planted
  // there (node-pty when it is not installed, say) would be what the next cordon loads.
  mustNotAppear.push(...deps.before)
}

/** The cordon package, its dependencies and where Node looks for them first: what a remedy never offers to unprotect. */
export function ownPackagePlaces(packageRoot: string = PACKAGE_ROOT): string[] {
  const deps = dependencyPlaces(packageRoot)
  return [packageRoot, ...deps.found, ...deps.before]
}

/** The protected paths of `policy` that lie inside its writable roots (root, extras). */
export function protectedSetFor(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  packageRoot: string = PACKAGE_ROOT,
  home?: string,
): ProtectedSet {
  const stamps: ProtectedSet['stamps'] = []
  const stamp = (p: string) => {
    const st = lstat(p)
    stamps.push({ path: p, ino: st?.ino ?? 0 })
    return st
  }
  const roots = grants.writable.filter((w) => w.kind === 'root' || w.kind === 'extra').map((w) => w.path)
  const candidates: ProtectedPath[] = grants.protectedPaths.map((p) => ({ path: p, kind: 'file', origin: 'policy' }))
  const unprotected = unprotectedOf(policy).map(canonicalPath)
  for (const d of protectedDefaultPlaces(policy, roots, unprotected, homeInRoots(roots, home)))
    candidates.push({ path: d.path, kind: 'file', origin: 'default' })
  const mustNotAppear: string[] = []
  const mustStay: Array<{ path: string; target: string }> = []
  const searched: DirStamp[] = []
  packagePlaces(packageRoot, candidates, mustNotAppear)
  if (policy.protectedDefaults !== false) {
    for (const root of roots) {
      for (const checkout of checkoutsIn(root, stamp, searched)) {
        const dirs = gitDirsOf(checkout, stamp)
        if (dirs === undefined) continue
        // A worktree's `.git` file names its git dir: rewritten, it would point git elsewhere.
        if (lstat(path.join(checkout, '.git'))?.isFile())
          candidates.push({ path: path.join(checkout, '.git'), kind: 'file', origin: 'git' })
        for (const gitDir of new Set([dirs.own, dirs.common])) {
          gitPlaces(gitDir, candidates, stamp)
          const commondir = path.join(gitDir, 'commondir')
          if (stamp(commondir)) candidates.push({ path: commondir, kind: 'file', origin: 'git' })
          else if (gitDir === dirs.common) mustNotAppear.push(commondir)
          for (const c of configReferences(path.join(gitDir, 'config'), checkout)) candidates.push(c)
        }
      }
    }
    // npm's link to the CLI beside the package (what `npx cordon` runs): not mountable (a mount
    // lands on its target), so it is made again after the run if the run changed it.
    const bin = path.join(path.dirname(packageRoot), '.bin', 'cordon')
    // Stamped: a link the person reinstalls makes the set stale (never restored to the old target).
    if (stamp(bin)?.isSymbolicLink()) mustStay.push({ path: bin, target: fs.readlinkSync(bin) })
  }
  // What the policy opts out of goes: git's and cordon's places too (a path the policy names stays).
  const appearing = mustNotAppear.filter((p) => !isUnprotected(p, unprotected))
  const paths = settle(candidates, { roots, unprotected, stamp, mustNotAppear: appearing, mustStay })
  const parentList = dirsBetween(
    paths.map((p) => p.path),
    roots,
  )
  const inRoots = (p: string) => roots.some((r) => within(p, r))
  const appear = [...new Set(appearing)].filter(inRoots)
  const stay = [...new Map(mustStay.map((l) => [l.path, l])).values()].filter((l) => inRoots(l.path))
  return {
    paths,
    parents: parentList,
    stamps,
    searched,
    ...(appear.length > 0 ? { mustNotAppear: appear } : {}),
    ...(stay.length > 0 ? { mustStay: stay } : {}),
  }
}

/** What `settle` needs besides the candidates; `mustNotAppear` gains the missing ones, `mustStay` the links. */
interface SettleContext {
  roots: readonly string[]
  unprotected: readonly string[]
  stamp: (p: string) => fs.Stats | undefined
  mustNotAppear: string[]
  mustStay: Array<{ path: string; target: string }>
}

/**
 * The candidates that lie inside a writable root, once each (symlinks resolved), as they are now;
 * a missing one that must not appear goes to `ctx.mustNotAppear`, and each symlink on the way
 * from a writable root to one (wherever it points) to `ctx.mustStay`: a mount lands on the
 * target, so the link stays replaceable and is made again after the run if the run changed it
 * (what the run put in its place, a planted file or a dir holding one, is moved aside).
 */
function settle(candidates: readonly ProtectedPath[], ctx: SettleContext): ProtectedPath[] {
  const paths: ProtectedPath[] = []
  const seen = new Set<string>()
  for (const c of candidates) {
    const way = linksOnTheWay(c.path, ctx.roots, ctx.stamp)
    const p = way.resolved ?? canonicalPath(c.path)
    // Opted out by where it leads or by its own name (a dangling link's, say).
    if (c.origin !== 'policy' && [p, c.path].some((q) => isUnprotected(q, ctx.unprotected))) continue
    // Wherever the links lead (a target outside the roots too): the links themselves lie inside.
    ctx.mustStay.push(...way.links)
    if (seen.has(p) || !ctx.roots.some((r) => within(p, r) && p !== r)) continue
    seen.add(p)
    const st = ctx.stamp(p)
    if (st === undefined) {
      // A missing hooks dir would let a command plant hooks: an empty read-only one goes there,
      // when its parent (the git dir) exists. Missing files stay missing (git reads none then).
      if (c.kind === 'dir' && c.origin === 'git' && lstat(path.dirname(p))?.isDirectory())
        paths.push({ path: p, kind: 'missing-dir', origin: c.origin })
      // A missing file git would read (an included config, config.worktree), a missing default
      // (VS Code tasks, `~/.bashrc`) or one the policy names must not appear either.
      else if (c.kind === 'file' || c.origin === 'default') ctx.mustNotAppear.push(p)
      continue
    }
    if (st.isSymbolicLink()) continue // a mount would land on its target; the target is listed where it lies
    paths.push({ path: p, kind: st.isDirectory() ? 'dir' : 'file', origin: c.origin })
  }
  return paths
}

/**
 * What a git config names that git will read or run from: the `core.hooksPath` dir and the
 * files of `include.path` / `includeIf.*.path` (relative ones against the config's dir; hooksPath
 * against the work tree). A plain reading of the INI file: git's quoting is not needed for paths.
 */
function configReferences(config: string, workTree: string): ProtectedPath[] {
  let text: string
  try {
    text = fs.readFileSync(config, 'utf8')
  } catch {
    return []
  }
  const out: ProtectedPath[] = []
  let section = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    const head = /^\[\s*([^\]\s"]+)(?:\s+"[^"]*")?\s*\]/.exec(line)
    if (head) {
      section = (head[1] ?? '').toLowerCase()
      continue
    }
    const kv = /^([A-Za-z][\w-]*)\s*=\s*"?([^"#;]*)"?/.exec(line)
    if (!kv) continue
    const key = (kv[1] ?? '').toLowerCase()
    const value = (kv[2] ?? '').trim()
    if (value === '') continue
    const home = process.env.HOME ?? ''
    const expanded = value.startsWith('~/') ? path.join(home, value.slice(2)) : value
    if (section === 'core' && key === 'hookspath')
      out.push({ path: path.resolve(workTree, expanded), kind: 'dir', origin: 'git' })
    if ((section === 'include' || section === 'includeif') && key === 'path')
      out.push({ path: path.resolve(path.dirname(config), expanded), kind: 'file', origin: 'git' })
  }
  return out
}

/** The names Node tries for `require(dep)` in one node_modules dir: the dir, and the files first. */
const MODULE_FORMS = ['', '.js', '.json', '.node']

/**
 * The cordon package's runtime dependencies as Node would load them (`found`: the dir each
 * resolves to), and every place Node looks first (`before`: `node_modules/<dep>` and its file
 * forms in each directory from the package up to where it is found, or to `/` when it is not).
 */
function dependencyPlaces(packageRoot: string): { found: string[]; before: string[] } {
  let deps: string[]
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>
      optionalDependencies?: Record<string, string>
    }
    deps = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]
  } catch {
    return { found: [], before: [] }
  }
  const found: string[] = []
  const before: string[] = []
  for (const dep of deps) {
    // Node looks in node_modules of the package and of every directory above it.
    for (let dir = packageRoot; ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules', dep)
      // Node tries the file forms before the directory, at the level where it is found too.
      for (const form of MODULE_FORMS.slice(1)) before.push(`${candidate}${form}`)
      if (lstat(candidate)?.isDirectory()) {
        found.push(candidate)
        break
      }
      before.push(candidate)
      if (path.dirname(dir) === dir) break
    }
  }
  return { found, before }
}

/** Whether a protected set still describes the file system (each stamped path's inode unchanged). */
export function protectedSetCurrent(set: ProtectedSet): boolean {
  return set.stamps.every((s) => (lstat(s.path)?.ino ?? 0) === s.ino) && unchangedDirs(set.searched ?? [])
}

/**
 * The directories strictly between each of `paths` and the deepest of `roots` holding it, parents
 * first: what bubblewrap binds in place so that renaming them cannot move a mount away.
 */
export function dirsBetween(paths: readonly string[], roots: readonly string[]): string[] {
  const out = new Set<string>()
  for (const p of paths) {
    const root = roots.filter((r) => within(p, r) && p !== r).sort((a, b) => b.length - a.length)[0]
    if (root === undefined) continue
    for (let dir = path.dirname(p); dir !== root && within(dir, root); dir = path.dirname(dir)) out.add(dir)
  }
  return [...out].sort((a, b) => a.split('/').length - b.split('/').length)
}
