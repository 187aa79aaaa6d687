/**
 * Where each word of a command text ran, read from the text alone: a small shell reader that
 * follows `cd DIR` (and `pushd`), `-C DIR` (git, make, tar) and subshells, and reads the script of a
 * nested shell (`sh -c '…'`, `dash -c`, `bash -lc "…"`, quotes within quotes) the same way. A
 * denial message's relative path then resolves against the directory the word that names it was
 * in. What the text cannot say (`cd "$dest"`, `cd` alone, `cd -`) leaves the place unknown: the
 * classifier then falls back to the failure log or to no path, never a guess.
 */
import { existsSync, statSync } from 'node:fs'
import { basename, isAbsolute, resolve } from 'node:path'

/** One simple command: its words and the directories its shell could have been in (undefined: unknown). */
export interface PlacedCommand {
  words: string[]
  dirs: readonly string[] | undefined
}

/** What a command text says about places. */
export interface CommandText {
  /** Every simple command but `cd`/`pushd`/`popd`, nested shells' included. */
  commands: PlacedCommand[]
  /** The `cd DIR` targets the text names, resolved (known ones only). */
  cd: string[]
  /** The `-C DIR` directories, resolved (known ones only). */
  dashC: string[]
}

type Token = { word: string; dynamic: boolean } | { op: string }

const SHELLS = /^(sh|bash|dash|zsh|ksh|mksh|ash|posh|yash)$/
/** Programs whose `-C DIR` is the directory they work in (`ls -C` is columns). */
const DASH_C = /^(git|make|gmake|bmake|tar|gtar|bsdtar|ninja)$/
const SCRIPT_OPTION = /^-[a-zA-Z]*c[a-zA-Z]*$/
const OPERATORS = ['&&', '||', ';;', '|&', '&>', '>>', '<<', '>&', '<&', '>|', ';', '&', '|', '(', ')', '<', '>']
/** The most nested shells a text is read into (a script quoting itself must not cost the host). */
const MAX_DEPTH = 8

/** The end of a `$(…)` or `${…}` starting at `i` (the index after its closer), quotes inside respected. */
function closing(text: string, i: number, open: string, close: string): number {
  let depth = 0
  for (let j = i; j < text.length; j++) {
    const c = text[j]
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, j + 1)
      if (end < 0) return text.length
      j = end
    } else if (c === open) depth++
    else if (c === close && --depth === 0) return j + 1
  }
  return text.length
}

/** The body of a double-quoted string starting after its `"`, and the index after its closing quote. */
function doubleQuoted(text: string, i: number): { body: string; end: number; dynamic: boolean } {
  let body = ''
  let dynamic = false
  let j = i
  for (; j < text.length && text[j] !== '"'; j++) {
    const c = text[j]!
    if (c === '\\' && '"\\$`\n'.includes(text[j + 1] ?? '')) {
      if (text[j + 1] !== '\n') body += text[j + 1]
      j++
    } else {
      if (c === '$' || c === '`') dynamic = true
      body += c
    }
  }
  return { body, end: j + 1, dynamic }
}

/** One piece of a word starting at some index: its text, whether the text cannot say its value, and where the next starts. */
type Piece = { text: string; dynamic: boolean; next: number }

/** A quoted or escaped piece at `i` ('…', "…", \x), or undefined. */
function quotedPiece(text: string, i: number): Piece | undefined {
  const c = text[i]
  if (c === "'") {
    const close = text.indexOf("'", i + 1)
    const stop = close < 0 ? text.length : close
    return { text: text.slice(i + 1, stop), dynamic: false, next: stop + 1 }
  }
  if (c === '"') {
    const q = doubleQuoted(text, i + 1)
    return { text: q.body, dynamic: q.dynamic, next: q.end }
  }
  if (c === '\\') return { text: text[i + 1] === '\n' ? '' : (text[i + 1] ?? ''), dynamic: false, next: i + 2 }
  return undefined
}

/** An expansion at `i` ($x, ${…}, $(…), `…`): kept as written, its value unknown; or undefined. */
function expansionPiece(text: string, i: number): Piece | undefined {
  const c = text[i]
  if (c === '`') {
    const stop = text.indexOf('`', i + 1) + 1 || text.length
    return { text: text.slice(i, stop), dynamic: true, next: stop }
  }
  if (c !== '$') return undefined
  const open = text[i + 1]
  const stop = open === '(' ? closing(text, i + 1, '(', ')') : open === '{' ? closing(text, i + 1, '{', '}') : i + 1
  return { text: text.slice(i, stop), dynamic: true, next: stop }
}

/** What ends a word at `i`: a blank, a newline (a `;`), a comment, or an operator; undefined for a word's character. */
function separatorAt(text: string, i: number, atWordStart: boolean): { op?: string; next: number } | undefined {
  const c = text[i]
  if (c === ' ' || c === '\t') return { next: i + 1 }
  if (c === '\n') return { op: ';', next: i + 1 }
  if (c === '#' && atWordStart) {
    const nl = text.indexOf('\n', i)
    return { next: nl < 0 ? text.length : nl }
  }
  const op = OPERATORS.find((o) => text.startsWith(o, i))
  return op === undefined ? undefined : { op: /[<>]/.test(op) ? 'redirect' : op, next: i + op.length }
}

/** A command text's words (quotes taken away, `$` marking what the text does not say) and operators. */
function tokensOf(text: string): Token[] {
  const out: Token[] = []
  let word: { word: string; dynamic: boolean } | undefined
  let i = 0
  while (i < text.length) {
    const piece = quotedPiece(text, i) ?? expansionPiece(text, i)
    const sep = piece === undefined ? separatorAt(text, i, word === undefined) : undefined
    if (sep !== undefined) {
      if (word !== undefined) out.push(word)
      word = undefined
      if (sep.op !== undefined) out.push({ op: sep.op })
      i = sep.next
      continue
    }
    const part = piece ?? { text: text[i]!, dynamic: false, next: i + 1 }
    word = { word: (word?.word ?? '') + part.text, dynamic: (word?.dynamic ?? false) || part.dynamic }
    i = part.next
  }
  if (word !== undefined) out.push(word)
  return out
}

/** `dirs` with `target` resolved against each; undefined when the target is not known from the text. */
function moved(dirs: readonly string[] | undefined, target: { word: string; dynamic: boolean } | undefined) {
  if (target === undefined || target.dynamic || target.word === '-' || target.word.startsWith('~')) return undefined
  if (isAbsolute(target.word)) return [resolve(target.word)]
  return dirs === undefined ? undefined : [...new Set(dirs.map((d) => resolve(d, target.word)))]
}

/** Whether every one of `dirs` is a directory now (a `cd` into it then most likely succeeded). */
function allDirectories(dirs: readonly string[]): boolean {
  return dirs.every((d) => existsSync(d) && statSync(d).isDirectory())
}

/** The reader's walk over one script: the shell's possible directories, subshell stack, and a pending `cd`. */
class Walk {
  private dirs: readonly string[] | undefined
  private readonly stack: Array<readonly string[] | undefined> = []
  /** A `cd` just read: where the shell is once it succeeded. */
  private pending: readonly string[] | undefined | null = null
  /** Where the shell is after a `cd … || fallback` (set while the fallback runs). */
  private afterFallback: readonly string[] | undefined | null = null

  constructor(
    dirs: readonly string[] | undefined,
    private readonly into: CommandText,
    private readonly depth: number,
  ) {
    this.dirs = dirs
  }

  run(tokens: readonly Token[]): void {
    let words: Array<{ word: string; dynamic: boolean }> = []
    for (const t of tokens) {
      if ('word' in t) {
        words.push(t)
        continue
      }
      if (t.op === 'redirect') continue
      this.command(words)
      words = []
      this.operator(t.op)
    }
    this.command(words)
  }

  /** An operator after a command: where the next command's shell is. */
  private operator(op: string): void {
    if (op === '(') {
      this.stack.push(this.dirs)
      return
    }
    if (op === ')') {
      if (this.stack.length > 0) this.dirs = this.stack.pop()
      this.pending = null
      return
    }
    if (this.pending !== null) {
      const target = this.pending
      this.pending = null
      if (op === '&&') this.dirs = target
      else if (op === '||') this.afterFallback = this.settled(target)
      // A pipeline's or a background job's cd moves a subshell only.
      else if (op !== '|' && op !== '|&' && op !== '&') this.dirs = this.settled(target)
      return
    }
    if (this.afterFallback !== null && op !== '||' && op !== '&&') {
      this.dirs = this.afterFallback
      this.afterFallback = null
    }
  }

  /** Where the shell is after a `cd` whose success the text does not show: there when it exists now, else either. */
  private settled(target: readonly string[] | undefined): readonly string[] | undefined {
    if (target === undefined || this.dirs === undefined) return target
    return allDirectories(target) ? target : [...new Set([...this.dirs, ...target])]
  }

  private command(words: Array<{ word: string; dynamic: boolean }>): void {
    // Leading assignments (`A=1 cmd`) set the environment, not the program.
    const start = words.findIndex((w) => !/^[A-Za-z_]\w*=/.test(w.word))
    if (start < 0) return
    const program = words[start]!.word
    if (program === 'cd' || program === 'pushd') {
      const target = moved(
        this.dirs,
        words.slice(start + 1).find((w) => !/^-[LPe@]*$/.test(w.word) && w.word !== '--'),
      )
      if (target !== undefined) this.into.cd.push(...target)
      this.pending = target
      return
    }
    if (program === 'popd') {
      this.pending = undefined
      return
    }
    const here = this.placeOf(words)
    this.into.commands.push({ words: words.map((w) => w.word), dirs: here })
    this.nested(words, here)
  }

  /** Where a command works: its shell's directory, or the one its `-C DIR` options name. */
  private placeOf(words: ReadonlyArray<{ word: string; dynamic: boolean }>): readonly string[] | undefined {
    let here = this.dirs
    let switched = false
    for (const [i, w] of words.entries()) {
      if (w.word !== '-C' || !DASH_C.test(basename(words[0]!.word))) continue
      here = moved(here, words[i + 1])
      switched = true
    }
    if (switched && here !== undefined) this.into.dashC.push(...here)
    return here
  }

  /** A nested shell's script (`sh -c SCRIPT`, also after env, sudo, xargs…), read from this place. */
  private nested(words: ReadonlyArray<{ word: string; dynamic: boolean }>, here: readonly string[] | undefined): void {
    if (this.depth >= MAX_DEPTH) return
    for (const [i, w] of words.entries()) {
      if (!SHELLS.test(basename(w.word))) continue
      let j = i + 1
      let script = false
      for (; j < words.length && words[j]!.word.startsWith('-'); j++) script ||= SCRIPT_OPTION.test(words[j]!.word)
      if (!script || j >= words.length) continue
      new Walk(here, this.into, this.depth + 1).run(tokensOf(words[j]!.word))
      return
    }
  }
}

/** What `command` says about where its commands ran, read from `cwd`. */
export function readCommandText(command: string, cwd: string): CommandText {
  const into: CommandText = { commands: [], cd: [], dashC: [] }
  new Walk([cwd], into, 0).run(tokensOf(command))
  return into
}

/** Directories a command switches to (`cd DIR`, `git -C DIR`, `make -C DIR`, in nested shells too), resolved against `cwd`. */
export function directoriesIn(command: string, cwd: string): string[] {
  const text = readCommandText(command, cwd)
  return [...new Set([...text.cd, ...text.dashC])]
}

/** The commands of every run's text, each placed from the directory its shell started in. */
function commandsOf(runs: ReadonlyArray<{ cwd: string; command: string }>): PlacedCommand[] {
  return runs.flatMap((r) => readCommandText(r.command, r.cwd).commands)
}

/**
 * The places of the words that name a message's relative `token` (`x`, or `--out=x`); undefined
 * when no word names it, empty when one does in a place the text does not say.
 */
export function placesNaming(
  token: string,
  runs: ReadonlyArray<{ cwd: string; command: string }>,
): string[] | undefined {
  const naming = commandsOf(runs).filter((c) => c.words.some((w) => w === token || w.endsWith(`=${token}`)))
  if (naming.length === 0) return undefined
  return naming.every((c) => c.dirs !== undefined) ? [...new Set(naming.flatMap((c) => c.dirs!))] : []
}

/** Every place a command of the runs ran (their cwds for a text of `cd`s alone); empty when one ran where the text does not say. */
export function placesOfCommands(runs: ReadonlyArray<{ cwd: string; command: string }>): string[] {
  const commands = commandsOf(runs)
  // A command in a place the text does not say (after `cd "$dest"`) could have printed it: unknown.
  if (commands.some((c) => c.dirs === undefined)) return []
  const known = commands.flatMap((c) => c.dirs!)
  return [...new Set(known.length > 0 ? known : runs.map((r) => r.cwd))]
}

/**
 * Where a message's relative `token` is, per the commands that could have printed it (each with the
 * directory its shell started in): the places of the words that name it, else every place a
 * command ran; empty when the text knows none.
 */
export function basesForToken(token: string, runs: ReadonlyArray<{ cwd: string; command: string }>): string[] {
  return placesNaming(token, runs) ?? placesOfCommands(runs)
}
