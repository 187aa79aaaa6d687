/**
 * A command text as its simple commands, each a list of words with the quotes taken away: enough
 * of POSIX shell to read what a command runs on (src/sandbox/remedy/removals.ts), not to run it.
 * Lists and pipelines split at `;`, `&`, `|`, `&&`, `||`, newlines and parentheses outside quotes;
 * redirections are left out; a word says whether any of it was quoted and whether it expands (`$`, a backtick) when run.
 */

/** One word of a simple command. */
export interface ShellWord {
  /** The word with quotes and backslashes taken away (a `$VAR` stays as written). */
  text: string
  /** Some part of it was quoted (a quoted `~` or `*` is literal). */
  quoted: boolean
  /** It holds an expansion the text alone does not fix (`$…`, `` `…` ``). */
  expands: boolean
}

/** Characters that end a simple command outside quotes. */
const SEPARATORS = new Set([';', '&', '|', '\n', '(', ')'])

/** The simple commands of `text`, in order. */
export function simpleCommands(text: string): ShellWord[][] {
  const state: LexState = { commands: [], words: [], word: undefined }
  let i = 0
  while (i < text.length) i = step(text, i, state)
  endCommand(state)
  return state.commands
}

/** Where the lexer is: the commands so far, the current one's words, the word being read. */
interface LexState {
  commands: ShellWord[][]
  words: ShellWord[]
  word: ShellWord | undefined
}

function endWord(state: LexState): void {
  if (state.word !== undefined) state.words.push(state.word)
  state.word = undefined
}

function endCommand(state: LexState): void {
  endWord(state)
  if (state.words.length > 0) state.commands.push(state.words)
  state.words = []
}

/** Reads what starts at `i` (a blank, a separator, a redirection, a comment, or part of a word); returns where it ends. */
function step(text: string, i: number, state: LexState): number {
  const ch = text[i]!
  if (ch === ' ' || ch === '\t') {
    endWord(state)
    return i + 1
  }
  if (SEPARATORS.has(ch)) {
    endCommand(state)
    return i + 1
  }
  if (ch === '<' || ch === '>') {
    // A redirection (`2>&1`, `> out`): its fd number and its target are no words of the command.
    if (state.word !== undefined && /^\d+$/.test(state.word.text) && !state.word.quoted) state.word = undefined
    endWord(state)
    return skipRedirection(text, i)
  }
  if (ch === '#' && state.word === undefined) {
    const eol = text.indexOf('\n', i)
    return eol < 0 ? text.length : eol
  }
  state.word ??= { text: '', quoted: false, expands: false }
  return readPart(text, i, state.word)
}

/** Past a redirection operator at `i` and the word it takes. */
function skipRedirection(text: string, i: number): number {
  while (i < text.length && '<>&|'.includes(text[i]!)) i++
  while (text[i] === ' ' || text[i] === '\t') i++
  const target: ShellWord = { text: '', quoted: false, expands: false }
  while (i < text.length && !' \t'.includes(text[i]!) && !SEPARATORS.has(text[i]!) && !'<>'.includes(text[i]!))
    i = readPart(text, i, target)
  return i
}

/** Reads one part of a word at `i` into `w` (a quoted span, an escape, an expansion, or a character); returns where it ends. */
function readPart(text: string, i: number, w: ShellWord): number {
  const ch = text[i]!
  if (ch === "'") {
    const close = text.indexOf("'", i + 1)
    const stop = close < 0 ? text.length : close
    w.text += text.slice(i + 1, stop)
    w.quoted = true
    return stop + 1
  }
  if (ch === '"') return readDoubleQuoted(text, i + 1, w)
  if (ch === '\\') {
    w.text += text[i + 1] ?? ''
    w.quoted = true
    return i + 2
  }
  if (ch === '$' || ch === '`') return readExpansion(text, i, w)
  w.text += ch
  return i + 1
}

/** A "…" span: backslash escapes `$`, `` ` ``, `"`, `\`; expansions inside stay. */
function readDoubleQuoted(text: string, i: number, w: ShellWord): number {
  w.quoted = true
  while (i < text.length && text[i] !== '"') {
    const ch = text[i]!
    if (ch === '\\' && '$`"\\\n'.includes(text[i + 1] ?? '')) {
      w.text += text[i + 1]
      i += 2
    } else if (ch === '$' || ch === '`') {
      i = readExpansion(text, i, w)
    } else {
      w.text += ch
      i++
    }
  }
  return i + 1
}

/** `$NAME`, `${…}`, `$(…)` or `` `…` `` kept as written (a whole `$(…)`, nested parentheses included). */
function readExpansion(text: string, i: number, w: ShellWord): number {
  w.expands = true
  const open = text[i] === '`' ? '`' : text.slice(i, i + 2)
  let stop: number
  if (open === '`') {
    const close = text.indexOf('`', i + 1)
    stop = close < 0 ? text.length : close + 1
  } else if (open === '$(' || open === '${') {
    const [o, c] = open === '$(' ? ['(', ')'] : ['{', '}']
    let depth = 0
    stop = i + 1
    for (; stop < text.length; stop++) {
      if (text[stop] === o) depth++
      else if (text[stop] === c && --depth === 0) break
    }
    stop = Math.min(stop + 1, text.length)
  } else {
    const m = /^\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9#?$!@*-])?/.exec(text.slice(i))
    stop = i + (m?.[0].length ?? 1)
  }
  w.text += text.slice(i, stop)
  return stop
}
