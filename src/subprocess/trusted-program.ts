/**
 * Programs the host itself runs (bwrap, cordon-exec, sandbox-exec, stty): a confined run must
 * not be able to have planted or replaced them. A program is trusted when the file and every
 * directory above it (on the path as given and on its real path) belong to root or the host
 * user and are writable by neither group nor others; a directory others may write is accepted
 * only when root owns it and it is sticky (/tmp: nobody else can replace a name in it). Whether
 * a plan makes the program writable is the sandbox's check, made per plan.
 */
import { lstatSync, realpathSync, type Stats, statSync } from 'node:fs'
import path from 'node:path'
import type { ProgramFacts } from '../policy/backends.js'

/** Where the host looks for the programs it runs by name: never the caller's PATH. */
export const TRUSTED_SEARCH_PATH: readonly string[] = ['/usr/bin', '/bin', '/usr/sbin', '/sbin']

/** What a trusted program was when it was checked: run it only while it still is. */
export interface ProgramIdentity extends ProgramFacts {
  /** The absolute path as given (what is executed). */
  path: string
}

/** A candidate that failed, and why (for `cordon probe` and errors). */
export interface RefusedProgram {
  path: string
  reason: string
}

/** Trusted, with its identity; or refused with the reason. */
export type ProgramTrust = { ok: true; identity: ProgramIdentity } | ({ ok: false } & RefusedProgram)

const S_ISVTX = 0o1000
const GROUP_OR_OTHER_WRITE = 0o022

/** The uid the host runs as (root where the platform has none). */
function hostUid(): number {
  return typeof process.getuid === 'function' ? process.getuid() : 0
}

/** Why `st` (of `at`) may not hold or be a program the host runs; undefined when it may. */
function ownershipProblem(st: Stats, at: string, uid: number, isDir: boolean): string | undefined {
  if (st.uid !== 0 && st.uid !== uid) return `${at} is owned by uid ${st.uid}, neither root nor the host user (${uid})`
  if ((st.mode & GROUP_OR_OTHER_WRITE) === 0) return undefined
  if (isDir && st.uid === 0 && (st.mode & S_ISVTX) !== 0) return undefined
  return `${at} is writable by ${(st.mode & 0o002) !== 0 ? 'others' : 'its group'}`
}

/** Every directory from `/` down to the one holding `file`. */
function ancestors(file: string): string[] {
  const dirs: string[] = []
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    dirs.unshift(dir)
    if (dir === path.dirname(dir)) return dirs
  }
}

/** Why a directory chain is unsafe (each entry lstat'ed: a symlink in it is checked where it stands). */
function chainProblem(file: string, uid: number): string | undefined {
  for (const dir of ancestors(file)) {
    let st: Stats
    try {
      st = lstatSync(dir)
    } catch (error) {
      return `${dir} cannot be examined (${(error as NodeJS.ErrnoException).code})`
    }
    // A symlink's own mode means nothing (it is always 0777, and nobody writes a link): who owns
    // it still does; its parent is checked above and its target by the real path's chain.
    const problem = st.isSymbolicLink()
      ? ownershipProblem({ uid: st.uid, mode: 0 } as Stats, dir, uid, true)
      : ownershipProblem(st, dir, uid, true)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** Whether the host may run `program` (an absolute path), with the identity to run it by. */
export function checkTrustedProgram(program: string, uid: number = hostUid()): ProgramTrust {
  const refuse = (reason: string): ProgramTrust => ({ ok: false, path: program, reason })
  if (!path.isAbsolute(program)) return refuse('not an absolute path')
  let realPath: string
  let st: Stats
  try {
    realPath = realpathSync(program)
    st = statSync(realPath)
  } catch (error) {
    return refuse(`cannot be examined (${(error as NodeJS.ErrnoException).code})`)
  }
  if (!st.isFile()) return refuse('not a regular file')
  if ((st.mode & 0o111) === 0) return refuse('not executable')
  const problem =
    ownershipProblem(st, realPath, uid, false) ??
    chainProblem(program, uid) ??
    (realPath === program ? undefined : chainProblem(realPath, uid))
  if (problem !== undefined) return refuse(problem)
  const { dev, ino, mode, size, mtimeMs, ctimeMs } = st
  return { ok: true, identity: { path: program, realPath, dev, ino, uid: st.uid, mode, size, mtimeMs, ctimeMs } }
}

/** The first trusted `name` in `dirs`, and every candidate refused on the way. */
export function findTrustedProgram(
  name: string,
  dirs: readonly string[] = TRUSTED_SEARCH_PATH,
  uid: number = hostUid(),
): { identity?: ProgramIdentity; refused: RefusedProgram[] } {
  const refused: RefusedProgram[] = []
  const seen = new Set<string>()
  for (const dir of dirs) {
    const candidate = path.join(dir, name)
    let real: string
    try {
      real = realpathSync(candidate)
    } catch {
      continue // not there
    }
    if (seen.has(real)) continue
    seen.add(real)
    const trust = checkTrustedProgram(candidate, uid)
    if (trust.ok) return { identity: trust.identity, refused }
    refused.push({ path: trust.path, reason: trust.reason })
  }
  return { refused }
}

/** Whether the program at `identity.path` is still the file that was checked (and still trusted). */
export function stillTrusted(identity: ProgramIdentity, uid: number = hostUid()): boolean {
  const now = checkTrustedProgram(identity.path, uid)
  if (!now.ok) return false
  const n = now.identity
  return (
    n.realPath === identity.realPath &&
    n.dev === identity.dev &&
    n.ino === identity.ino &&
    n.uid === identity.uid &&
    n.mode === identity.mode &&
    n.size === identity.size &&
    n.mtimeMs === identity.mtimeMs &&
    n.ctimeMs === identity.ctimeMs
  )
}

/**
 * Why the program a probe recorded at `program` (with its identity, when recorded) may not be run
 * now: replaced, moved, or no longer trusted since it was checked; undefined when it may. Without
 * a recorded identity it is checked afresh.
 */
export function recordedProgramProblem(
  program: string,
  recorded: Omit<ProgramIdentity, 'path'> | undefined,
  uid: number = hostUid(),
): string | undefined {
  if (recorded !== undefined && stillTrusted({ path: program, ...recorded }, uid)) return undefined
  const now = checkTrustedProgram(program, uid)
  if (!now.ok) return `${program} is refused: ${now.reason}`
  return recorded === undefined ? undefined : `${program} was replaced since the probe checked it`
}

/** An identity without its path: what a probe's verdict records of the executable it names. */
export function identityFacts(identity: ProgramIdentity): Omit<ProgramIdentity, 'path'> {
  const { path: _path, ...facts } = identity
  return facts
}
