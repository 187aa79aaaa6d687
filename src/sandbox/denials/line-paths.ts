/**
 * The paths a denial line names, as tools print them: quoted ('…', "…", `…', ‘…’), the bare token
 * before ": <errno text>" (Python's `[Errno 13]` between them too), or the one before ": Cannot
 * VERB: <errno text>" (tar, perl). A bare name without a slash counts only where a path stands in
 * the line, never a word of the message. Relative ones resolve against the directories the
 * command could have been in: against the one that could hold it, else all are candidates.
 */
import { existsSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, resolve, sep } from 'node:path'

/** The errno texts a path can stand before (the sandbox's and the busy mount point's). */
const ERRNO = '(?:permission denied|read-only file system|operation not permitted|device or resource busy)'
const PATH_TOKEN = '((?:\\/|\\.{1,2}\\/|~\\/)?[^\\s:\'"`‘’]+)'

// Each quoting style on its own, so a path quoted inside a quoted message
// ("EROFS: read-only file system, open '/x'") is still found.
const QUOTED_STYLES = [/'([^'\n]+)'/g, /"([^"\n]+)"/g, /`([^'`\n]+)'/g, /‘([^’\n]+)’/g]
/** A quoted span that is a message itself (it names an error), not a path. */
const MESSAGE = /(permission denied|read-only file system|operation not permitted|device or resource busy|: )/i
const BARE_BEFORE_COLON = new RegExp(`(?:^|[\\s:(])${PATH_TOKEN}\\s*:\\s*(?:\\[errno \\d+\\]\\s*)?${ERRNO}`, 'gi')
// GNU tar's "tar: DIR: Cannot mkdir: Read-only file system", perl's "Can't do inplace edit on F:
// Cannot make temp name: Permission denied": the path before the operation (never the program
// that starts the line: "/usr/bin/ld: cannot open output file m: …" names m).
const BEFORE_CANNOT = new RegExp(`[\\s:(]${PATH_TOKEN}\\s*:\\s*cannot \\w+(?: \\w+){0,2}\\s*:\\s*${ERRNO}`, 'gi')

/** Words that sit where a path would and are not one: program names, error codes (EACCES), labels, exception names. */
const NOT_A_PATH =
  /^(sh|bash|dash|zsh|line|error|fatal|warning|failed|cp|mv|rm|touch|mkdir|tee|dd|sed|ln|open|write|errno|tar|perl|E[A-Z]{2,}|\w*Error|\w*Exception)$/i

/** One path a denial line names: resolved, or the candidates a relative one has when several bases could hold it. */
export type NamedPath = { path: string } | { candidates: string[] }

/**
 * Whether a bare name (no slash) stands where a path does: first in the line or right after a
 * `:` (`bash: Makefile: Permission denied`), named as a file in the phrase (`ld: cannot open
 * output file hello: Permission denied`, dash's `cannot create out.txt: …`, perl's `edit on f.txt`);
 * not any other word of a phrase (`script: failed to create pseudo-terminal: …` names no file).
 */
function startsAField(line: string, m: RegExpMatchArray): boolean {
  const before = line.slice(0, (m.index ?? 0) + m[0].indexOf(m[1]!)).trimEnd()
  return (
    before === '' ||
    before.endsWith(':') ||
    before.endsWith('(') ||
    /\b(file|directory|folder|path|cannot create|edit on)$/i.test(before)
  )
}

/** The raw path tokens of a denial line. */
export function pathTokens(line: string): string[] {
  const found: string[] = []
  for (const style of QUOTED_STYLES) {
    for (const m of line.matchAll(style)) if (!MESSAGE.test(m[1]!)) found.push(m[1]!)
  }
  for (const re of [BARE_BEFORE_COLON, BEFORE_CANNOT])
    for (const m of line.matchAll(re)) if (m[1]!.includes('/') || startsAField(line, m)) found.push(m[1]!)
  return [...new Set(found)].filter((p) => (p.includes('/') || /^[\w.-]+$/.test(p)) && !NOT_A_PATH.test(p))
}

/**
 * `token` as a path: absolute as it is; relative against the one base that could hold it (it or its
 * parent exists there); when several could, all are candidates — never one guessed. No base: none.
 */
export function placeToken(token: string, bases: readonly string[]): NamedPath | undefined {
  if (isAbsolute(token)) return { path: resolve(token) }
  const distinct = [...new Set(bases)]
  if (distinct.length === 0) return undefined
  if (distinct.length === 1) return { path: resolve(distinct[0]!, token) }
  const holding = [
    ...new Set(distinct.map((b) => resolve(b, token)).filter((c) => existsSync(c) || existsSync(dirname(c)))),
  ]
  if (holding.length === 1) return { path: holding[0]! }
  return { candidates: holding.length > 0 ? holding : distinct.map((b) => resolve(b, token)) }
}

/** The paths of a denial line, each relative one placed against the bases `basesOf` gives for it. */
export function namedPaths(line: string, basesOf: (token: string) => readonly string[]): NamedPath[] {
  return pathTokens(line).flatMap((t) => {
    const named = placeToken(t, isAbsolute(t) ? [] : basesOf(t))
    return named === undefined ? [] : [named]
  })
}

/** Paths a denial line names that can be resolved without a guess (see {@link placeToken}). */
export function pathsInLine(line: string, cwd: string, bases: readonly string[] = [cwd]): string[] {
  const from = bases.length > 0 ? bases : [cwd]
  return namedPaths(line, () => from).flatMap((n) => ('path' in n ? [n.path] : []))
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

/** Whether `path` is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}
