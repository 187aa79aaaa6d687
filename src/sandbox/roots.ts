/**
 * Writable roots a confined command may be given, checked before any plan is built: never a
 * system directory or a home as a whole, never a pseudo-filesystem (wherever it is mounted),
 * never `/run` itself; a workspace root never inside another writable root (a previous run could
 * swap it for a symlink); never a root reached through a symlink that lies inside a writable root
 * (this holds across separate processes, e.g. two CLI runs). Within one sandbox each session's
 * roots are also pinned by identity when first used: a swapped root is a RootChangedError.
 */
import fs from 'node:fs'
import path from 'node:path'
import { InvalidRequestError, RootChangedError } from '../policy/errors.js'
import type { SandboxGrants } from '../policy/grants.js'
import type { SandboxPolicy } from '../policy/vocabulary.js'

/** Filesystem magic numbers (statfs f_type) that are never a writable root. */
export const PSEUDO_FILESYSTEMS: Readonly<Record<number, string>> = {
  40864: 'proc',
  1650812274: 'sysfs',
  4979: 'devtmpfs',
  7377: 'devpts',
  2613483: 'cgroup',
  1667723888: 'cgroup2',
  1935894131: 'securityfs',
  1684170528: 'debugfs',
  1953653091: 'tracefs',
  3405662737: 'bpf',
  1112100429: 'binfmt_misc',
}

/** System directories that are never a writable root themselves. */
export const SYSTEM_ROOTS: readonly string[] = [
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/opt',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/usr',
  // merged-/usr hosts: /bin, /sbin and /lib resolve here, and roots are compared resolved
  '/usr/bin',
  '/usr/sbin',
  '/usr/lib',
  '/usr/lib32',
  '/usr/lib64',
  '/usr/libexec',
  '/var',
]

/** Why `root` may not be writable, or undefined when it may. */
export function refusedRoot(root: string, home: string | undefined): string | undefined {
  if (SYSTEM_ROOTS.includes(root)) return `${root} is a system directory; give the project's own directory`
  if (home !== undefined && home !== '/' && (root === home || isInside(home, root)))
    return `${root} ${root === home ? 'is' : 'contains'} the home directory ${home} (its dotfiles would run unconfined later); give the project's own directory`
  try {
    const type = PSEUDO_FILESYSTEMS[Number(fs.statfsSync(root).type)]
    if (type !== undefined) return `${root} is on a ${type} filesystem, never a writable root`
  } catch {
    // a missing root is reported where the grants are built
  }
  return undefined
}

/** Whether `inner` lies strictly beneath `outer` (both canonical). */
function isInside(inner: string, outer: string): boolean {
  return inner !== outer && (outer === '/' || inner.startsWith(`${outer}/`))
}

/** The first symlink met walking `given` from `/`, as a path, or undefined. */
function symlinkOnTheWay(given: string): string | undefined {
  const parts = given.split('/').filter((p) => p !== '')
  let at = ''
  for (const part of parts) {
    at = `${at}/${part}`
    try {
      if (fs.lstatSync(at).isSymbolicLink()) return at
    } catch {
      return undefined
    }
  }
  return undefined
}

/** Every reason the policy's writable roots are refused (empty: they are fine). */
export function rootProblems(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  home = process.env.HOME,
  otherHomes: readonly (string | undefined)[] = [],
): string[] {
  const problems: string[] = []
  const writable = grants.writable.filter((w) => w.kind === 'root' || w.kind === 'extra')
  // The host's home, and that of whoever the command runs as (a root host's workspace owner).
  const homes = [
    ...new Set([home, ...otherHomes].filter((h): h is string => h !== undefined && h !== '').map(canonical)),
  ]
  for (const w of writable) {
    const why = [undefined, ...homes].map((h) => refusedRoot(w.path, h)).find((r) => r !== undefined)
    if (why !== undefined) problems.push(`${w.kind === 'root' ? 'workspaceRoot' : 'writableRoots'}: ${why}`)
  }
  const root = writable.find((w) => w.kind === 'root')
  if (root) {
    for (const other of writable) {
      if (other !== root && isInside(root.path, other.path))
        problems.push(
          `workspaceRoot: ${root.path} lies inside the writable root ${other.path} (a run could replace it with a symlink); give them side by side`,
        )
    }
  }
  // Roots as the caller gave them: a symlink on the way that lies inside a writable root could
  // have been planted by an earlier run.
  const given = [...(policy.mode === 'workspace-write' ? [policy.workspaceRoot] : []), ...(policy.writableRoots ?? [])]
  for (const p of given) {
    const link = symlinkOnTheWay(p)
    if (link === undefined) continue
    const inWritable = writable.find((w) => isInside(link, w.path) || link === w.path)
    if (inWritable)
      problems.push(`${p}: reached through the symlink ${link}, which lies inside the writable root ${inWritable.path}`)
  }
  return problems
}

function canonical(p: string): string {
  try {
    return fs.realpathSync.native(p)
  } catch {
    return path.resolve(p)
  }
}

/** Throws InvalidRequestError listing every refused root (`otherHomes`: homes besides the host's, never a root). */
export function checkRoots(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  otherHomes: readonly (string | undefined)[] = [],
): void {
  const problems = rootProblems(policy, grants, process.env.HOME, otherHomes)
  if (problems.length > 0) throw new InvalidRequestError(problems, { context: 'refused writable root' })
}

/** Each session's roots, pinned by (dev, ino) when first used. */
export class RootPins {
  private readonly pins = new Map<string, Map<string, string>>()

  /**
   * Pins every writable root of `grants` for the session — each as resolved and as the policy
   * names it (a root swapped for a symlink resolves elsewhere, but its given path changed) — or
   * throws RootChangedError for one that changed.
   */
  check(sessionId: string | undefined, grants: SandboxGrants, policy?: SandboxPolicy): void {
    const key = sessionId ?? ''
    let pins = this.pins.get(key)
    if (!pins) {
      pins = new Map()
      this.pins.set(key, pins)
    }
    const given =
      policy === undefined
        ? []
        : [...(policy.mode === 'workspace-write' ? [policy.workspaceRoot] : []), ...(policy.writableRoots ?? [])]
    const paths = [
      ...grants.writable.filter((w) => w.kind === 'root' || w.kind === 'extra').map((w) => w.path),
      ...given,
    ]
    for (const p of new Set(paths)) {
      let id: string
      try {
        const st = fs.lstatSync(p)
        id = st.isSymbolicLink() ? 'symlink' : `${st.dev}:${st.ino}`
      } catch {
        continue // a missing root is reported where the plan is built
      }
      const pinned = pins.get(p)
      if (pinned === undefined) pins.set(p, id)
      else if (pinned !== id) throw new RootChangedError(p, sessionId)
    }
  }
}
