/**
 * The narrowest widening that really allows a denied write: `workspace-write` for paths inside the
 * workspace root, plus one extra writable root per path outside it — the nearest existing
 * directory that holds it, checked against what cordon accepts as a writable root (never `/`, a
 * system dir, the home dir itself, a host temp dir, a pseudo filesystem, cordon's own state). A path no such root can
 * reach gets no remedy: cordon never prints a flag that would not work.
 */
import fs from 'node:fs'
import path from 'node:path'
import { grantsFor } from '../policy/grants.js'
import type { SandboxExecutionPolicy, SandboxPolicy } from '../policy/vocabulary.js'
import { isWithin } from './denials/line-paths.js'
import { rootProblems } from './roots.js'
import { ownStateInGrants, ownStatePlaces } from './view/own-state.js'

/** A widening: the extra writable roots to add under workspace-write (empty: the mode alone suffices). */
export interface WriteRemedy {
  writableRoots: string[]
  /** Denied paths no writable root could allow (the host temp dirs, system dirs…). */
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

/** Whether `root` would be accepted as an extra writable root of `policy`. */
function acceptable(policy: SandboxExecutionPolicy, root: string): boolean {
  const widened: SandboxPolicy = {
    ...policy,
    mode: 'workspace-write',
    writableRoots: [...(policy.writableRoots ?? []), root],
  }
  try {
    const grants = grantsFor(widened)
    // Nor cordon's own state, which a plan refuses (STATE_IN_GRANT): never suggest what fails.
    return rootProblems(widened, grants).length === 0 && ownStateInGrants(grants, ownStatePlaces()) === undefined
  } catch {
    return false
  }
}

/** The remedy for writes denied at `paths` under `policy`. */
export function writeRemedy(policy: SandboxExecutionPolicy, paths: readonly string[]): WriteRemedy {
  const writableRoots: string[] = []
  const unreachable: string[] = []
  for (const p of paths) {
    if (isWithin(p, policy.workspaceRoot) || writableRoots.some((r) => isWithin(p, r))) continue
    // The file's own directory when it exists, else the nearest existing ancestor (one step converges).
    const dir = existingDirOf(fs.existsSync(p) && !fs.statSync(p).isDirectory() ? path.dirname(p) : p)
    if (acceptable(policy, dir)) writableRoots.push(dir)
    else unreachable.push(p)
  }
  return { writableRoots, unreachable }
}
