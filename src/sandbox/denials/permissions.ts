/**
 * Whether ordinary permissions alone would have let the command do what a denial line says: the
 * host check that keeps EACCES from file modes (or a program printing the words about a place it
 * could never write) from counting as the sandbox's refusal. Removing or renaming needs the
 * parent directory (and the sticky-bit rule), creating needs the nearest existing parent, writing
 * needs the file itself.
 */
import { accessSync, constants, existsSync, lstatSync, statSync } from 'node:fs'
import { dirname } from 'node:path'

/** Whom a command's permission checks are for, when they differ from the host process's. */
export interface CommandUser {
  uid: number
  gids: readonly number[]
}

const REMOVAL = /\b(remove|unlink|rmdir|move|rename)\b/i

/**
 * What a line's operation on `path` needs permission on: the file itself to write it; its parent
 * to create, remove or rename it — for a path whose parents are missing too (git's "could not
 * create leading directories of …", any mkdir -p), the nearest that exists: the first one made.
 */
function permissionTarget(
  path: string,
  line: string,
): { stat: ReturnType<typeof lstatSync> | undefined; needsParent: boolean; target: string } {
  let stat: ReturnType<typeof lstatSync> | undefined
  try {
    stat = lstatSync(path)
  } catch {
    stat = undefined
  }
  const needsParent = stat === undefined || REMOVAL.test(line)
  let target = needsParent ? dirname(path) : path
  while (!existsSync(target) && dirname(target) !== target) target = dirname(target)
  return { stat, needsParent, target }
}

/** Whether the host's uid (the command's uid) could do what the line says on `path` without the sandbox. */
function permittedForHost(path: string, line: string): boolean {
  const { stat, needsParent, target } = permissionTarget(path, line)
  try {
    accessSync(target, needsParent ? constants.W_OK | constants.X_OK : constants.W_OK)
  } catch {
    return false
  }
  if (needsParent && stat !== undefined) {
    // A sticky directory lets only the owner of the file or of the directory remove it.
    const uid = process.getuid?.() ?? 0
    const parent = statSync(target)
    if ((parent.mode & 0o1000) !== 0 && uid !== 0 && stat.uid !== uid && parent.uid !== uid) return false
  }
  return true
}

/** The permission bits `who` gets on `st`: owner, else group, else other (ACLs are not read). */
function bitsFor(who: CommandUser, st: { uid: number; gid: number; mode: number }): number {
  if (st.uid === who.uid) return (st.mode >> 6) & 7
  if (who.gids.includes(st.gid)) return (st.mode >> 3) & 7
  return st.mode & 7
}

/** Whether `who` — without any capability — could do what the line says on `path` (see permittedForHost). */
function permittedForUser(who: CommandUser, path: string, line: string): boolean {
  const { stat, needsParent, target } = permissionTarget(path, line)
  let st: ReturnType<typeof statSync>
  try {
    st = statSync(target)
  } catch {
    return false
  }
  const want = needsParent ? 0o3 : 0o2
  if ((bitsFor(who, st) & want) !== want) return false
  if (needsParent && stat !== undefined && (st.mode & 0o1000) !== 0 && stat.uid !== who.uid && st.uid !== who.uid)
    return false
  return true
}

/**
 * Whether ordinary permissions would have let the command do what `line` says on `path`: as the
 * host's uid, or as `who` (a root host's capability-less command, or the workspace owner).
 */
export function permittedUnconfined(path: string, line: string, who?: CommandUser): boolean {
  return who === undefined ? permittedForHost(path, line) : permittedForUser(who, path, line)
}

/** Whether a 126 exit names an existing file that simply is not executable (or a directory): not the sandbox. */
export function notExecutable(path: string, exitCode: number | null): boolean {
  if (exitCode !== 126) return false
  try {
    const s = statSync(path)
    return s.isDirectory() || (s.isFile() && (s.mode & 0o111) === 0)
  } catch {
    return false
  }
}
