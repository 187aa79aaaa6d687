/**
 * Whether the sandbox denied a file operation, read from a run's exit and stderr as facts:
 * the backend's denial text, a path that text names, that path outside what the policy lets
 * the command write, and a host check that the same uid could have written it without the
 * sandbox (so EACCES from file permissions, or a program merely printing the words, is not a
 * sandbox denial). A matching line that names no path is not counted: we never guess.
 */
import { accessSync, constants, lstatSync } from 'node:fs'
import { dirname, isAbsolute, resolve, sep } from 'node:path'

/** The denial text each backend's kernel mechanism produces (errno strings, lower case). */
export const DENIAL_SIGNATURES: Readonly<Record<string, string>> = {
  landlock: 'permission denied', // EACCES
  bubblewrap: 'read-only file system', // EROFS
  seatbelt: 'operation not permitted', // EPERM
}

/** What the classifier needs to know about one finished run. */
export interface DenialInput {
  backend: string
  exitCode: number | null
  runnerFailed: boolean
  stderr: string
  /** The command's working directory (relative paths in messages resolve against it). */
  cwd: string
  /** Canonical paths the policy lets the command write (roots, extra roots, temp dir, devices). */
  writable: readonly string[]
}

/** The classification: `denied` and the paths it rests on. */
export interface DenialFacts {
  denied: boolean
  deniedPaths: string[]
}

// Paths as tools print them: quoted ('…', "…", `…'), or the bare token before ": <error>".
const QUOTED = /[‘'"`]([^'"`’\n]+)[’'"]/g
const BARE_BEFORE_COLON = /(?:^|[\s:(])((?:\/|\.{1,2}\/|~\/)?[^\s:'"`]+)\s*:\s*(?:permission denied|read-only file system|operation not permitted)/gi

/** Paths a denial line names, in order, resolved against `cwd`. */
export function pathsInLine(line: string, cwd: string): string[] {
  const found: string[] = []
  for (const m of line.matchAll(QUOTED)) found.push(m[1]!)
  for (const m of line.matchAll(BARE_BEFORE_COLON)) found.push(m[1]!)
  return [...new Set(found)]
    .filter((p) => p.includes('/') || /^[\w.-]+$/.test(p))
    .filter((p) => !/^(sh|bash|dash|zsh|line|error|fatal|warning|cp|mv|rm|touch|mkdir|tee|dd|sed|ln|open|write|errno)$/i.test(p))
    .map((p) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p)))
}

/** Whether `path` is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

/** Whether the host's uid could write (or create) `path` by ordinary permissions alone. */
function writableWithoutSandbox(path: string): boolean {
  let target = path
  try {
    lstatSync(target)
  } catch {
    target = dirname(target) // creating: the parent directory must take the new name
  }
  try {
    accessSync(target, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** Classifies one finished run; `denied` never holds for exit 0, a signal death or a runner failure. */
export function classifyDenial(input: DenialInput): DenialFacts {
  const none: DenialFacts = { denied: false, deniedPaths: [] }
  const signature = DENIAL_SIGNATURES[input.backend]
  if (signature === undefined || input.runnerFailed || input.exitCode === null || input.exitCode === 0) return none
  const deniedPaths: string[] = []
  for (const line of input.stderr.split(/\r?\n/)) {
    if (!line.toLowerCase().includes(signature)) continue
    for (const path of pathsInLine(line, input.cwd)) {
      if (input.writable.some((root) => isWithin(path, root))) continue
      if (!writableWithoutSandbox(path)) continue
      if (!deniedPaths.includes(path)) deniedPaths.push(path)
    }
  }
  return { denied: deniedPaths.length > 0, deniedPaths }
}
