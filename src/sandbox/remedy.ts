/**
 * The narrowest widening that really allows a denied write, in one step: `workspace-write` when
 * the mode in force is narrower and a path lies inside the workspace root (never the mode already
 * in force), one extra writable root per path outside it — the nearest existing directory that
 * holds it, or for a tree the command removes (src/sandbox/remedy/removals.ts) the tree's parent,
 * since the tree itself goes — and `--unprotect` for each default-protected path the write (or a
 * removed tree) meets once widened. A root is checked against what cordon accepts (never `/`, a
 * system dir, the home dir itself, a host temp dir, a pseudo filesystem, cordon's own state). A
 * path no flag can reach gets no remedy: cordon never prints a flag that would not work.
 */
import fs from 'node:fs'
import path from 'node:path'
import { grantsFor } from '../policy/grants.js'
import type { SandboxExecutionPolicy, SandboxPolicy } from '../policy/vocabulary.js'
import { isWithin } from './denials/line-paths.js'
import type { Removal } from './remedy/removals.js'
import { rootProblems } from './roots.js'
import { ownStateInGrants, ownStatePlaces } from './view/own-state.js'
import { ownPackagePlaces, protectedSetFor } from './view/protected-paths.js'

export type { Removal } from './remedy/removals.js'
export { removalsIn } from './remedy/removals.js'

/** A widening: flags to add to the run's own. */
export interface WriteRemedy {
  /** `workspace-write` when the mode in force is narrower and it is needed; absent when it is in force already. */
  mode?: 'workspace-write'
  /** Extra writable roots to add. */
  writableRoots: string[]
  /** Protected paths to leave writable (`--unprotect`): relative to the workspace root inside it, else absolute. */
  unprotect: string[]
  /** Paths the policy itself protects (`protectedPaths`): only dropping that protection allows them. */
  protectedByPolicy: string[]
  /** Denied paths no flag could allow (the host temp dirs, system dirs, the home, cordon's own package…). */
  unreachable: string[]
}

/** The nearest existing directory at or above `p`. */
function existingDirOf(p: string): string {
  let dir = p
  for (;;) {
    try {
      if (fs.statSync(dir).isDirectory()) return dir
    } catch {
      // not there (yet): its parent
    }
    const parent = path.dirname(dir)
    if (parent === dir) return dir
    dir = parent
  }
}

/** `policy` under workspace-write with `roots` added. */
function widened(policy: SandboxExecutionPolicy, roots: readonly string[]): SandboxPolicy {
  return { ...policy, mode: 'workspace-write', writableRoots: [...(policy.writableRoots ?? []), ...roots] }
}

/** Whether `root` would be accepted as an extra writable root of `policy`. */
function acceptable(policy: SandboxExecutionPolicy, root: string): boolean {
  const wider = widened(policy, [root])
  try {
    const grants = grantsFor(wider)
    // Nor cordon's own state, which a plan refuses (STATE_IN_GRANT): never suggest what fails.
    return rootProblems(wider, grants).length === 0 && ownStateInGrants(grants, ownStatePlaces()) === undefined
  } catch {
    return false
  }
}

/** What one denied path needs: the dir that must be writable, and the tree a removal takes with it. */
interface Need {
  denied: string
  dir: string
  /** The tree a removal takes away whole (its top-most operand). */
  tree?: string
}

/** The need of `p`: the top-most removal holding it (its parent, or itself when emptied), else its own dir. */
function needOf(p: string, removals: readonly Removal[]): Need {
  const holding = removals.filter((r) => isWithin(p, r.path)).sort((a, b) => a.path.length - b.path.length)[0]
  if (holding?.kind === 'tree') return { denied: p, dir: path.dirname(holding.path), tree: holding.path }
  if (holding !== undefined) return { denied: p, dir: holding.path }
  // The file's own directory when it exists, else the nearest existing ancestor.
  return { denied: p, dir: fs.existsSync(p) && !fs.statSync(p).isDirectory() ? path.dirname(p) : p }
}

/**
 * The remedy for writes denied at `paths` under `policy`; `removals`: what the command takes away
 * (src/sandbox/remedy/removals.ts:removalsIn), so a tree's parent is widened, not its files' dirs.
 */
export function writeRemedy(
  policy: SandboxExecutionPolicy,
  paths: readonly string[],
  removals: readonly Removal[] = [],
): WriteRemedy {
  const roots: string[] = []
  const unreachable: string[] = []
  let needsRoot = false
  const needs = paths.map((p) => needOf(p, removals))
  const writable = [
    ...(policy.mode === 'workspace-write' ? [policy.workspaceRoot] : []),
    ...(policy.writableRoots ?? []),
  ]
  for (const need of needs) {
    if (isWithin(need.dir, policy.workspaceRoot)) {
      needsRoot = true
      continue
    }
    if ([...writable, ...roots].some((r) => isWithin(need.dir, r))) continue
    const dir = existingDirOf(need.dir)
    if (acceptable(policy, dir)) roots.push(dir)
    else unreachable.push(need.denied)
  }
  // One root holding another: the outer one alone.
  const writableRoots = roots.filter((r) => !roots.some((o) => o !== r && isWithin(r, o)))
  const reached = needs.filter((n) => !unreachable.includes(n.denied))
  const shield = protectionsMet(policy, writableRoots, reached)
  unreachable.push(...shield.unreachable)
  const remedy: WriteRemedy = {
    writableRoots,
    unprotect: shield.unprotect,
    protectedByPolicy: shield.byPolicy,
    unreachable,
  }
  if (policy.mode === 'read-only' && (needsRoot || writableRoots.length > 0 || shield.unprotect.length > 0))
    remedy.mode = 'workspace-write'
  return remedy
}

/**
 * The protected paths of the widened policy the needs meet: a protected path holding a denied
 * one, or lying inside a tree the command removes or renames (`mv .git x` moves the binds below
 * it). A write into a dir that holds protected paths (a push into a bare repository) leaves them
 * protected. Cordon's own package stays protected (unreachable); a path the policy protects
 * itself is named as such.
 */
function protectionsMet(
  policy: SandboxExecutionPolicy,
  roots: readonly string[],
  needs: readonly Need[],
): { unprotect: string[]; byPolicy: string[]; unreachable: string[] } {
  const wider = widened(policy, roots)
  let entries: Array<{ path: string; origin: string }>
  try {
    const set = protectedSetFor(wider, grantsFor(wider))
    // A missing path that must not appear keeps no origin: the policy's own are told by name.
    const named = (policy.protectedPaths ?? []).map((p) => path.resolve(policy.workspaceRoot, p))
    const originOf = (p: string) => (named.some((n) => isWithin(p, n)) ? 'policy' : 'default')
    entries = [...set.paths, ...(set.mustNotAppear ?? []).map((p) => ({ path: p, origin: originOf(p) }))]
  } catch {
    return { unprotect: [], byPolicy: [], unreachable: [] }
  }
  const own = ownPackagePlaces()
  const unprotect = new Set<string>()
  const byPolicy = new Set<string>()
  const unreachable: string[] = []
  for (const need of needs) {
    const tree = need.tree
    const met = entries.filter((e) => isWithin(need.denied, e.path) || (tree !== undefined && isWithin(e.path, tree)))
    if (met.length === 0) continue
    if (met.some((e) => e.origin === 'cordon' || own.some((o) => isWithin(e.path, o)))) {
      unreachable.push(need.denied)
      continue
    }
    for (const e of met.filter((m) => m.origin === 'policy')) byPolicy.add(e.path)
    const others = met.filter((m) => m.origin !== 'policy')
    if (others.length === 0) continue
    // A removed tree as a whole: one flag leaves everything below it writable.
    const target = tree ?? others.find((e) => isWithin(need.denied, e.path))?.path
    if (target !== undefined) unprotect.add(shownPath(policy, target))
  }
  return { unprotect: [...unprotect], byPolicy: [...byPolicy], unreachable }
}

/** A path as `--unprotect` takes it: relative to the workspace root inside it, else absolute. */
function shownPath(policy: SandboxExecutionPolicy, p: string): string {
  return isWithin(p, policy.workspaceRoot) && p !== policy.workspaceRoot ? path.relative(policy.workspaceRoot, p) : p
}
