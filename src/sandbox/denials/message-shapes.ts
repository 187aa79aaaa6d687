/**
 * Denial messages that are not `PATH: <errno text>`, each shape taken from real tools run confined
 * (the labelled corpus: test/unit/sandbox/denials/corpus.json): the errno on a line of its own
 * after the path (cargo's "Caused by:" chain, CMake's "System Error"), npm's code block, git's
 * refused push into a local repository, CMake's path on the next line, sqlite's read-only
 * database, and Node's recursive mkdir under a read-only bind. A shape only names the path and
 * the operation; whether the sandbox refused it is judged by the same checks as every line.
 */
import { existsSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { LANDLOCK_VIEW } from '../confinement/denial-text.js'
import { type NamedPath, namedPaths, placeToken } from './line-paths.js'
import { readCommandText } from './shell-text.js'

/** What a shape needs of the run. */
export interface ShapeContext {
  backend: string
  /** The backend's errno texts, lower case (src/sandbox/confinement/denial-text.ts). */
  signatures: readonly string[]
  /** The errno codes its refusals carry as tools print them bare (`EACCES`). */
  codes: readonly string[]
  /** Where a relative token of a message could be (see src/sandbox/denials/shell-text.ts:basesForToken). */
  basesOf: (token: string) => readonly string[]
  /** The commands that could have printed the message, each with the directory its shell started in. */
  runs: ReadonlyArray<{ cwd: string; command: string }>
}

/** A recognised refusal: the paths it names and the text its operation is judged by. */
export interface Recognised {
  named: NamedPath[]
  /** The operation's words (removal, creation…) for the permission check and the read/write question. */
  operation: string
  /** The message itself says the refused operation was a write (not a read). */
  write?: boolean
}

/** A line that is only an errno text (its path is on a line above it). */
const ERRNO_ONLY =
  /^\s*(?:[\w ]*error:\s*:?\s*(?:system error:\s*)?)?(?:permission denied|read-only file system|operation not permitted)(?: \(os error \d+\))?\.?\s*$/i
/** A line above that says what failed. */
const FAILURE = /\b(fail\w*|unable|cannot|can't|could not|couldn't)\b/i
const ABSOLUTE = /(?:^|[\s:'"`(])(\/[^\s'"`:;,)]+)/g
/** How far above an errno-only line its path may be (cargo's chain puts it five lines up). */
const CHAIN_REACH = 8

/** The absolute paths of the nearest line above `i` that says what failed, within the chain. */
function chainPaths(lines: readonly string[], i: number, signatures: readonly string[]): string[] {
  for (let j = i - 1; j >= Math.max(0, i - CHAIN_REACH); j--) {
    const line = lines[j]!
    if (signatures.some((s) => line.toLowerCase().includes(s))) return []
    if (!FAILURE.test(line)) continue
    const paths = [...line.matchAll(ABSOLUTE)].map((m) => m[1]!.replace(/\.$/, ''))
    if (paths.length > 0) return [...new Set(paths)]
  }
  return []
}

/** A line carrying the backend's errno text: the paths it names, else (errno alone) the chain's. */
function errnoLine(lines: readonly string[], i: number, ctx: ShapeContext): Recognised | undefined {
  const line = lines[i]!
  const lower = line.toLowerCase()
  if (!ctx.signatures.some((s) => lower.includes(s))) return undefined
  const named = namedPaths(line, ctx.basesOf)
  if (named.length > 0 || !ERRNO_ONLY.test(line)) return { named, operation: line }
  const chain = chainPaths(lines, i, ctx.signatures)
  return { named: chain.map((path) => ({ path: resolve(path) })), operation: `${line}\n${lines[i - 1] ?? ''}` }
}

/** npm's block: `code EACCES` on one line, `path /x` a few lines below, the stack saying what it did. */
function npmBlock(lines: readonly string[], i: number, ctx: ShapeContext): Recognised | undefined {
  const m = /\bcode\s+(E[A-Z]+)\b/.exec(lines[i]!)
  if (m === null || !ctx.codes.includes(m[1]!)) return undefined
  const block = lines.slice(i, i + 25)
  for (const line of block.slice(1, 6)) {
    const p = /\bpath\s+(\/\S+)\s*$/.exec(line)
    if (p) return { named: [{ path: resolve(p[1]!) }], operation: block.join('\n') }
  }
  return { named: [], operation: lines[i]! }
}

/**
 * Node's recursive mkdir reports a read-only bind's EROFS as ENOENT ("ENOENT: no such file or
 * directory, mkdir '/x/y'"). mkdir fails with ENOENT only when the parent is missing, so when the
 * parent exists here, that ENOENT was the read-only mount's refusal (bubblewrap's, or a Landlock view's).
 */
function maskedMkdir(lines: readonly string[], i: number, ctx: ShapeContext): Recognised | undefined {
  if (ctx.backend !== 'bubblewrap' && ctx.backend !== LANDLOCK_VIEW) return undefined
  const m = /ENOENT: no such file or directory, mkdir '([^'\n]+)'/.exec(lines[i]!)
  if (!m) return undefined
  const named = placeToken(m[1]!, isAbsolute(m[1]!) ? [] : ctx.basesOf(m[1]!))
  if (named === undefined || !('path' in named)) return undefined
  if (existsSync(named.path) || !existsSync(dirname(named.path))) return undefined
  return { named: [named], operation: 'mkdir: Read-only file system', write: true }
}

/**
 * git's receive-pack could not make its quarantine in the remote's objects (`unable to create
 * temporary object directory`): the repository is the one the `To DEST` line names, when DEST is
 * a local path; the refused write is into that repository.
 */
function refusedPush(lines: readonly string[], i: number, ctx: ShapeContext): Recognised | undefined {
  if (!/unable to create temporary object directory/i.test(lines[i]!)) return undefined
  const named: NamedPath[] = []
  for (const line of lines) {
    const dest = /^To (.+?)\s*$/.exec(line)?.[1]?.replace(/^file:\/\//, '')
    // A URL or an scp-like host:path is not a local path.
    if (dest === undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(dest) || /^[^/]*:/.test(dest)) continue
    const place = placeToken(dest, isAbsolute(dest) ? [] : ctx.basesOf(dest))
    if (place === undefined) continue
    const gitDir = (p: string) => (existsSync(join(p, 'objects')) ? p : join(p, '.git'))
    named.push('path' in place ? { path: gitDir(place.path) } : { candidates: place.candidates.map(gitDir) })
  }
  return { named, operation: 'create a temporary object directory', write: true }
}

/** CMake's "Unable to (re)create the private pkgRedirects directory:" with the path on the next line. */
function cmakeNextLine(lines: readonly string[], i: number): Recognised | undefined {
  if (!/^CMake Error:.*\b(create|write|open)\b.*:\s*$/i.test(lines[i]!)) return undefined
  const next = lines[i + 1]?.trim() ?? ''
  if (!isAbsolute(next) || /\s/.test(next)) return undefined
  return { named: [{ path: resolve(next) }], operation: 'create', write: true }
}

/** sqlite3's options that take a value (the database is the first word that is neither). */
const SQLITE_VALUED = new Set(['-cmd', '-init', '-separator', '-newline', '-nullvalue', '-vfs', '-maxsize', '-mmap'])

/** The database a `sqlite3` command's words name (the first that is no option nor an option's value), if any. */
function databaseWord(words: readonly string[]): string | undefined {
  const at = words.findIndex((w) => basename(w) === 'sqlite3')
  // A database opened -readonly on purpose refuses writes of its own accord.
  if (at < 0 || words.includes('-readonly')) return undefined
  let j = at + 1
  while (j < words.length && words[j]!.startsWith('-')) j += SQLITE_VALUED.has(words[j]!) ? 2 : 1
  return words[j] === ':memory:' ? undefined : words[j]
}

/** The database the command's `sqlite3` runs name, where its command ran (candidates when several). */
function sqliteDatabases(ctx: ShapeContext): NamedPath[] {
  const named: NamedPath[] = []
  for (const run of ctx.runs) {
    for (const c of readCommandText(run.command, run.cwd).commands) {
      const db = databaseWord(c.words)
      const place = db === undefined || c.dirs === undefined ? undefined : placeToken(db, c.dirs)
      if (place !== undefined) named.push(place)
    }
  }
  // Several databases: which one refused is unknown; each is a candidate, never one guessed.
  const paths = [...new Set(named.flatMap((n) => ('path' in n ? [n.path] : n.candidates)))]
  return named.length === 1 || paths.length === 1 ? named.slice(0, 1) : paths.length > 0 ? [{ candidates: paths }] : []
}

/**
 * sqlite could not write its database or make its journal (`attempt to write a readonly database`,
 * a WAL database's `unable to open database file`): the database the command names, when it exists.
 */
function readonlyDatabase(lines: readonly string[], i: number, ctx: ShapeContext): Recognised | undefined {
  if (!/attempt to write a readonly database|unable to open database file/i.test(lines[i]!)) return undefined
  const named = sqliteDatabases(ctx).filter((n) => ('path' in n ? existsSync(n.path) : n.candidates.every(existsSync)))
  return { named, operation: 'write the database and its journal', write: true }
}

const SHAPES = [errnoLine, npmBlock, maskedMkdir, refusedPush, readonlyDatabase] as const

/** The refusal line `i` of a run's output states, in the first shape that reads it; undefined for none. */
export function recognise(lines: readonly string[], i: number, ctx: ShapeContext): Recognised | undefined {
  for (const shape of SHAPES) {
    const found = shape(lines, i, ctx)
    if (found !== undefined) return found
  }
  return cmakeNextLine(lines, i)
}
