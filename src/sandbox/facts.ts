/**
 * Whether the sandbox denied a file operation, read from a run's exit and stderr as facts:
 * the backend's denial text, a path that text names, that path outside what the policy lets
 * the command write, and a host check that the same uid could have written it without the
 * sandbox (so EACCES from file permissions, or a program merely printing the words, is not a
 * sandbox denial). A matching line that names no path is not counted: we never guess.
 */
import { accessSync, constants, existsSync, lstatSync, realpathSync, statSync } from 'node:fs'
import { dirname, isAbsolute, resolve, sep } from 'node:path'
import { DENIAL_SIGNATURES } from './confinement/denial-text.js'

export { DENIAL_SIGNATURES }

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
  /** The command's stdout tail: some tools (node's test runner) print their errors there. */
  stdout?: string | undefined
  /** Canonical hidden paths: a refusal there is of a read (the secrets class), never a write. */
  hidden?: readonly string[] | undefined
  /** Where each failed command of the run's shell ran, when the shell logged it (src/shell/failure-log.ts). */
  failures?: ReadonlyArray<{ cwd: string; command: string }> | undefined
  /** Protected paths inside writable roots (read-only binds): a refusal there is the sandbox's. */
  protectedPaths?: readonly string[] | undefined
  /**
   * Whom the command runs as, when its permission checks differ from the host's: a root host's
   * command has no capability (no DAC override), a command run as the workspace owner is theirs.
   */
  commandUser?: { uid: number; gids: readonly number[] } | undefined
}

/** The classification: `denied` and the paths it rests on. */
export interface DenialFacts {
  denied: boolean
  deniedPaths: string[]
}

// Paths as tools print them: quoted ('…', "…", `…', ‘…’), or the bare (unquoted) token before ": <error>".
// Each quoting style on its own, so a path quoted inside a quoted message
// ("EROFS: read-only file system, open '/x'") is still found.
const QUOTED_STYLES = [/'([^'\n]+)'/g, /"([^"\n]+)"/g, /`([^'`\n]+)'/g, /‘([^’\n]+)’/g]
/** A quoted span that is a message itself (it names an error), not a path. */
const MESSAGE = /(permission denied|read-only file system|operation not permitted|device or resource busy|: )/i
const BARE_BEFORE_COLON =
  /(?:^|[\s:(])((?:\/|\.{1,2}\/|~\/)?[^\s:'"`‘’]+)\s*:\s*(?:permission denied|read-only file system|operation not permitted|device or resource busy)/gi

// GNU tar's form: "tar: DIR: Cannot mkdir: Read-only file system" (the path before the operation).
const BEFORE_CANNOT =
  /(?:^|[\s:(])((?:\/|\.{1,2}\/|~\/)?[^\s:'"`‘’]+)\s*:\s*cannot \w+(?: \w+)?\s*:\s*(?:permission denied|read-only file system|operation not permitted|device or resource busy)/gi

/** Words that sit where a path would and are not one: program names, error codes (EACCES), labels. */
const NOT_A_PATH =
  /^(sh|bash|dash|zsh|line|error|fatal|warning|failed|cp|mv|rm|touch|mkdir|tee|dd|sed|ln|open|write|errno|E[A-Z]{2,})$/i

/** One path a denial line names: resolved, or the candidates a relative one has when several bases could hold it. */
type NamedPath = { path: string } | { candidates: string[] }

/** The raw path tokens of a denial line. */
/**
 * Whether a bare name (no slash) stands where a path does: first in the line or right after a
 * `:` (`bash: Makefile: Permission denied`), or named as a file in the phrase (`ld: cannot open
 * output file hello: Permission denied`); not any other word of a phrase (`script: failed to
 * create pseudo-terminal: Permission denied` names no file).
 */
function startsAField(line: string, m: RegExpMatchArray): boolean {
  const before = line.slice(0, (m.index ?? 0) + m[0].indexOf(m[1]!)).trimEnd()
  return (
    before === '' || before.endsWith(':') || before.endsWith('(') || /\b(file|directory|folder|path)$/i.test(before)
  )
}

function tokensOf(line: string): string[] {
  const found: string[] = []
  for (const style of QUOTED_STYLES) {
    for (const m of line.matchAll(style)) if (!MESSAGE.test(m[1]!)) found.push(m[1]!)
  }
  for (const re of [BARE_BEFORE_COLON, BEFORE_CANNOT])
    for (const m of line.matchAll(re)) if (m[1]!.includes('/') || startsAField(line, m)) found.push(m[1]!)
  return [...new Set(found)].filter((p) => (p.includes('/') || /^[\w.-]+$/.test(p)) && !NOT_A_PATH.test(p))
}

/**
 * The paths of a denial line. A relative one is resolved against `bases` (the command's cwd, then
 * the directories it `cd`s into): against the one base that could hold it (it or its parent
 * exists there); when several could, which one the failing command ran in is unknown, and all
 * are returned as candidates — never one guessed.
 */
function namedPaths(line: string, bases: readonly string[]): NamedPath[] {
  const distinct = [...new Set(bases)]
  return tokensOf(line).map((p) => {
    if (isAbsolute(p)) return { path: resolve(p) }
    if (distinct.length === 1) return { path: resolve(distinct[0]!, p) }
    const holding = [
      ...new Set(distinct.map((b) => resolve(b, p)).filter((c) => existsSync(c) || existsSync(dirname(c)))),
    ]
    if (holding.length === 1) return { path: holding[0]! }
    return { candidates: holding.length > 0 ? holding : distinct.map((b) => resolve(b, p)) }
  })
}

/** Paths a denial line names that can be resolved without a guess (see {@link namedPaths}). */
export function pathsInLine(line: string, cwd: string, bases: readonly string[] = [cwd]): string[] {
  return namedPaths(line, bases.length > 0 ? bases : [cwd]).flatMap((n) => ('path' in n ? [n.path] : []))
}

/** `path` with every symlink of its longest existing prefix resolved (a write through a link lands at its target). */
export function landingPath(path: string): string {
  let head = path
  const tail: string[] = []
  for (;;) {
    try {
      return resolve(realpathSync.native(head), ...tail.reverse())
    } catch {
      const parent = dirname(head)
      if (parent === head) return path
      tail.push(head.slice(parent === '/' ? 1 : parent.length + 1))
      head = parent
    }
  }
}

/** The words of a command text, quotes and operators taken away. */
function wordsOf(command: string): string[] {
  return command.split(/[\s'"`;&|()<>]+/).filter(Boolean)
}

/** Directories a command switches to (`cd DIR`, `git -C DIR`, `make -C DIR`), resolved against `cwd`. */
export function directoriesIn(command: string, cwd: string): string[] {
  const { cd, dashC } = switchesIn(command, cwd)
  return [...cd, ...dashC]
}

/** The `cd DIR` targets and the `-C DIR` ones of a command text, resolved against `cwd`. */
function switchesIn(command: string, cwd: string): { cd: string[]; dashC: string[] } {
  const cd: string[] = []
  const dashC: string[] = []
  for (const m of command.matchAll(/(?:^|[\s;&|('"])(cd|-C)\s+(?:'([^']+)'|"([^"]+)"|([^\s;&|)'"]+))/g)) {
    const dir = m[2] ?? m[3] ?? m[4]!
    // `cd "$dest"`: the text does not say where; the failure log (when armed) does.
    if (/[$`]/.test(dir)) continue
    ;(m[1] === 'cd' ? cd : dashC).push(resolve(cwd, dir))
  }
  return { cd, dashC }
}

/**
 * Where a failed command's relative paths are: against its `-C DIR` (tar, make and git name
 * paths relative to it), else its working directory or a directory it `cd`s into.
 */
function basesOfFailure(cwd: string, command: string): string[] {
  const { cd, dashC } = switchesIn(command, cwd)
  return dashC.length > 0 ? dashC : [cwd, ...cd]
}

/** Whether `path` is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
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

/**
 * Whether ordinary permissions alone would have let the host's uid (the command's uid) do what
 * the line says: removing or renaming needs the parent directory (and the sticky-bit rule),
 * creating needs the parent, writing needs the file itself.
 */
function permittedWithoutSandbox(path: string, line: string): boolean {
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
  let deniedWithoutPath = false
  const guessed = input.command ? basesOfFailure(input.cwd, input.command) : [input.cwd]
  const logged = input.failures ?? []
  // The directories a relative path could be against: where the failed command that names it
  // ran, else where any failed command ran, else (no log) the cwd and the dirs the text cds into.
  const basesFor = (line: string): string[] => {
    if (logged.length === 0) return guessed
    const tokens = tokensOf(line)
    const naming = logged.filter((f) => tokens.some((t) => wordsOf(f.command).includes(t)))
    // A failed command may itself cd (`sh -c 'cd sub && …'`): the dirs its text names are candidates too.
    const from = naming.length > 0 ? naming : logged
    return [...new Set(from.flatMap((f) => basesOfFailure(f.cwd, f.command)))]
  }
  const lines = [...input.stderr.split(/\r?\n/), ...(input.stdout ?? '').split(/\r?\n/)]
  for (const [i, line] of lines.entries()) {
    const lower = line.toLowerCase()
    const named = signatures.some((s) => lower.includes(s))
    const coded = !named && errorCodeLine(line, input.backend)
    const masked = !named && !coded && maskedMkdir(line, input)
    if (masked) {
      for (const path of masked) if (!deniedPaths.includes(path)) deniedPaths.push(path)
      continue
    }
    if (!named && !coded) continue
    // npm names the code on one line and the path a few lines below (`npm error path /x`).
    const named_ = coded ? npmPathNear(lines, i).map((path) => ({ path })) : namedPaths(line, basesFor(line))
    for (const n of named_) {
      if ('path' in n) {
        const path = landingPath(n.path)
        if (refusedBySandbox(path, line, input) && !deniedPaths.includes(path)) deniedPaths.push(path)
      } else if (n.candidates.every((c) => refusedBySandbox(landingPath(c), line, input))) {
        // Whichever directory the failing command ran in, the sandbox refused it: a denial,
        // though the path stays unknown.
        deniedWithoutPath = true
      }
    }
  }
  return { denied: deniedPaths.length > 0 || deniedWithoutPath, deniedPaths }
}

/** Whether a refusal at `path` was the sandbox's: outside what it lets the command write, and allowed without it. */
function refusedBySandbox(path: string, line: string, input: DenialInput): boolean {
  const isProtected = input.protectedPaths?.some((p) => isWithin(path, p)) === true
  // EBUSY is the sandbox's only on a protected path (a mount point); anywhere else it is ordinary.
  if (!isProtected && /device or resource busy/i.test(line)) return false
  if (!isProtected && input.writable.some((root) => isWithin(path, root))) return false
  // A hidden path refuses reads: that is the secrets class, and no writable root would help.
  if (input.hidden?.some((h) => isWithin(path, h))) return false
  // Landlock grants read and execute everywhere: a refused exec is the file's own mode.
  if (input.exitCode !== null && notExecutable(path, input.exitCode)) return false
  return input.commandUser === undefined
    ? permittedWithoutSandbox(path, line)
    : permittedFor(input.commandUser, path, line)
}

/** The permission bits `who` gets on `st`: owner, else group, else other (ACLs are not read). */
function bitsFor(
  who: { uid: number; gids: readonly number[] },
  st: { uid: number; gid: number; mode: number },
): number {
  if (st.uid === who.uid) return (st.mode >> 6) & 7
  if (who.gids.includes(st.gid)) return (st.mode >> 3) & 7
  return st.mode & 7
}

/**
 * Whether ordinary permissions would have let `who` — without any capability — do what the line
 * says (see permittedWithoutSandbox): the parent's write and search bits for creating or removing,
 * the file's write bit for writing it.
 */
function permittedFor(who: { uid: number; gids: readonly number[] }, path: string, line: string): boolean {
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

/** The errno codes each backend's refusals carry, as tools print them bare (`npm error code EROFS`). */
const DENIAL_CODES: Readonly<Record<string, readonly string[]>> = {
  landlock: ['EACCES'],
  'landlock-view': ['EROFS', 'EACCES'],
  bubblewrap: ['EROFS', 'EACCES'],
  seatbelt: ['EPERM'],
}

/** Whether `line` is an npm-style `code EACCES` line of one of the backend's denial codes. */
function errorCodeLine(line: string, backend: string): boolean {
  const m = /\bcode\s+(E[A-Z]+)\b/.exec(line)
  return m !== null && (DENIAL_CODES[backend] ?? []).includes(m[1]!)
}

/** The absolute path of an npm `path /x` line within the next few lines after `i`. */
function npmPathNear(lines: readonly string[], i: number): string[] {
  for (const line of lines.slice(i + 1, i + 6)) {
    const m = /\bpath\s+(\/\S+)\s*$/.exec(line)
    if (m) return [resolve(m[1]!)]
  }
  return []
}

/**
 * Node's recursive mkdir reports a read-only bind's EROFS as ENOENT ("ENOENT: no such file or
 * directory, mkdir '/x/y'"). mkdir fails with ENOENT only when the parent is missing, so when the
 * parent exists here, outside what the command may write, that ENOENT was bubblewrap's refusal.
 */
function maskedMkdir(line: string, input: DenialInput): string[] | undefined {
  if (input.backend !== 'bubblewrap') return undefined
  const m = /ENOENT: no such file or directory, mkdir '([^'\n]+)'/.exec(line)
  if (!m || !isAbsolute(m[1]!)) return undefined
  const path = landingPath(resolve(m[1]!))
  if (existsSync(path) || !existsSync(dirname(path))) return undefined
  return refusedBySandbox(path, 'mkdir: Read-only file system', input) ? [path] : undefined
}
