/**
 * Whether the sandbox denied a file operation, read from a run's exit and stderr as facts:
 * the backend's denial text, a path that text names, that path outside what the policy lets
 * the command write, and a host check that the same uid could have written it without the
 * sandbox (so EACCES from file permissions, or a program merely printing the words, is not a
 * sandbox denial). A matching line that names no path is not counted: we never guess.
 */
import { accessSync, constants, existsSync, lstatSync, statSync } from 'node:fs'
import { dirname, isAbsolute, resolve, sep } from 'node:path'

/**
 * The denial text each backend's kernel mechanisms produce (errno strings, lower case): EACCES
 * for Landlock; EROFS for bubblewrap's read-only binds, and EACCES for the Landlock write domain
 * cordon layers inside (existing FIFOs, reopens); EPERM for Seatbelt.
 */
export const DENIAL_SIGNATURES: Readonly<Record<string, readonly string[]>> = {
  landlock: ['permission denied'],
  bubblewrap: ['read-only file system', 'permission denied'],
  seatbelt: ['operation not permitted'],
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
  /** The command text, when known: `cd DIR` / `-C DIR` in it are other bases for relative paths. */
  command?: string | undefined
}

/** The classification: `denied` and the paths it rests on. */
export interface DenialFacts {
  denied: boolean
  deniedPaths: string[]
}

// Paths as tools print them: quoted ('…', "…", `…', ‘…’), or the bare (unquoted) token before ": <error>".
const QUOTED = /[‘'"`]([^'"`’\n]+)[’'"]/g
const BARE_BEFORE_COLON =
  /(?:^|[\s:(])((?:\/|\.{1,2}\/|~\/)?[^\s:'"`‘’]+)\s*:\s*(?:permission denied|read-only file system|operation not permitted)/gi

/** Paths a denial line names, in order, each relative one resolved against the first of `bases` where it (or its parent) exists. */
export function pathsInLine(line: string, cwd: string, bases: readonly string[] = [cwd]): string[] {
  const found: string[] = []
  for (const m of line.matchAll(QUOTED)) found.push(m[1]!)
  for (const m of line.matchAll(BARE_BEFORE_COLON)) found.push(m[1]!)
  return [...new Set(found)]
    .filter((p) => p.includes('/') || /^[\w.-]+$/.test(p))
    .filter(
      (p) =>
        !/^(sh|bash|dash|zsh|line|error|fatal|warning|cp|mv|rm|touch|mkdir|tee|dd|sed|ln|open|write|errno)$/i.test(p),
    )
    .map((p) => (isAbsolute(p) ? resolve(p) : resolveRelative(p, bases.length > 0 ? bases : [cwd])))
}

/** A relative path against the first base where it or its parent exists (else the first base). */
function resolveRelative(path: string, bases: readonly string[]): string {
  for (const base of bases) {
    const candidate = resolve(base, path)
    if (existsSync(candidate) || existsSync(dirname(candidate))) return candidate
  }
  return resolve(bases[0]!, path)
}

/** Directories a command switches to (`cd DIR`, `git -C DIR`, `make -C DIR`), resolved against `cwd`. */
export function directoriesIn(command: string, cwd: string): string[] {
  const dirs: string[] = []
  for (const m of command.matchAll(/(?:^|[\s;&|(])(?:cd|-C)\s+(?:'([^']+)'|"([^"]+)"|([^\s;&|)]+))/g)) {
    dirs.push(resolve(cwd, m[1] ?? m[2] ?? m[3]!))
  }
  return dirs
}

/** Whether `path` is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

const REMOVAL = /\b(remove|unlink|rmdir|move|rename)\b/i

/**
 * Whether ordinary permissions alone would have let the host's uid (the command's uid) do what
 * the line says: removing or renaming needs the parent directory (and the sticky-bit rule),
 * creating needs the parent, writing needs the file itself.
 */
function permittedWithoutSandbox(path: string, line: string): boolean {
  let stat: ReturnType<typeof lstatSync> | undefined
  try {
    stat = lstatSync(path)
  } catch {
    stat = undefined
  }
  const needsParent = stat === undefined || REMOVAL.test(line)
  const target = needsParent ? dirname(path) : path
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

/** Whether a 126 exit names an existing file that simply is not executable (or a directory): not the sandbox. */
function notExecutable(path: string, exitCode: number): boolean {
  if (exitCode !== 126) return false
  try {
    const s = statSync(path)
    return s.isDirectory() || (s.isFile() && (s.mode & 0o111) === 0)
  } catch {
    return false
  }
}

/** Classifies one finished run; `denied` never holds for exit 0, a signal death or a runner failure. */
export function classifyDenial(input: DenialInput): DenialFacts {
  const none: DenialFacts = { denied: false, deniedPaths: [] }
  const signatures = DENIAL_SIGNATURES[input.backend]
  if (signatures === undefined || input.runnerFailed || input.exitCode === null || input.exitCode === 0) return none
  const deniedPaths: string[] = []
  const bases = [...(input.command ? directoriesIn(input.command, input.cwd).reverse() : []), input.cwd]
  for (const line of input.stderr.split(/\r?\n/)) {
    const lower = line.toLowerCase()
    if (!signatures.some((s) => lower.includes(s))) continue
    for (const path of pathsInLine(line, input.cwd, bases)) {
      if (input.writable.some((root) => isWithin(path, root))) continue
      // Landlock grants read and execute everywhere: a refused exec is the file's own mode.
      if (notExecutable(path, input.exitCode)) continue
      if (!permittedWithoutSandbox(path, line)) continue
      if (!deniedPaths.includes(path)) deniedPaths.push(path)
    }
  }
  return { denied: deniedPaths.length > 0, deniedPaths }
}
