/**
 * Text a person approves or reads, made safe to show: every character a terminal would act on or
 * an eye would not see is written as a visible escape. That is the C0 controls (but the newline,
 * which the caller places), DEL, the C1 controls U+0080–U+009F, every format character (the bidi
 * controls, zero-width characters, tags…), every other default-ignorable one (variation selectors,
 * Hangul fillers…), the line and paragraph separators, every space but the ASCII one, the blank
 * braille pattern, lone surrogates, and a combining mark stacked on another. A carriage return, an erase-line sequence or a right-to-left override then
 * cannot make a prompt read `git status` while another command runs. A backslash stays as it is,
 * so ordinary commands read unchanged; an escape only ever adds visible characters.
 */

/** Named escapes, as a person knows them from C and shells. */
const NAMED: Readonly<Record<number, string>> = { 9: '\\t', 10: '\\n', 13: '\\r' }

/**
 * What an eye does not see: the default-ignorable code points (zero-width characters, invisible
 * operators, Hangul fillers, variation selectors, tags…), every format character, the line and
 * paragraph separators, every space but the ASCII one (U+00A0, U+3000…), and the blank braille
 * pattern U+2800. A variation selector goes too, U+FE0F (emoji presentation) included: `❤\ufe0f`
 * reads a little worse than `❤️`, but nothing unseen is ever shown as nothing.
 */
const INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Variation_Selector}\u2800]$/u

/** A combining mark: one shows on the character before it; a stack of them can paint over its neighbours. */
const MARK = /^\p{M}$/u

/** Whether `cp` is a combining mark. */
function isMark(cp: number | undefined): boolean {
  return cp !== undefined && cp > 0x2ff && MARK.test(String.fromCodePoint(cp))
}

/** Whether code point `cp` is shown as an escape (the newline included; callers decide on it). */
export function needsEscape(cp: number): boolean {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return true
  if (cp < 0x7f) return false
  if (cp >= 0xd800 && cp <= 0xdfff) return true // a lone surrogate (a pair is one code point)
  return INVISIBLE.test(String.fromCodePoint(cp)) // the bidi controls are format characters (Cf)
}

/**
 * Whether `cp`, coming right after `before` (undefined at the start), is shown as an escape:
 * needsEscape's characters, and a combining mark that follows another one. The first mark of a
 * run stays (é written as e and U+0301 reads as é); every further one shows as an escape, so a
 * stack of marks cannot hide the characters around it.
 */
export function needsEscapeAfter(before: number | undefined, cp: number): boolean {
  return needsEscape(cp) || (isMark(cp) && isMark(before))
}

/** The visible escape of `cp`: `\t`, `\r`, `\n`, `\x1b`, `\u202e` or `\u{e0041}`. */
export function escapeOf(cp: number): string {
  const named = NAMED[cp]
  if (named !== undefined) return named
  const hex = cp.toString(16)
  if (cp <= 0xff) return `\\x${hex.padStart(2, '0')}`
  if (cp <= 0xffff) return `\\u${hex.padStart(4, '0')}`
  return `\\u{${hex}}`
}

/** Calls `each` with every code point of `s` and its text (lone surrogates included, one by one). */
function forEachCodePoint(s: string, each: (cp: number, text: string) => boolean): void {
  for (let i = 0; i < s.length; ) {
    const cp = s.codePointAt(i) as number
    const size = cp > 0xffff ? 2 : 1
    if (!each(cp, s.slice(i, i + size))) return
    i += size
  }
}

/** `s` with every control, bidi and invisible character but the newline shown as a visible escape. */
export function escapeDisplayText(s: string): string {
  let out = ''
  let before: number | undefined
  forEachCodePoint(s, (cp, text) => {
    out += cp !== 0x0a && needsEscapeAfter(before, cp) ? escapeOf(cp) : text
    before = cp
    return true
  })
  return out
}

/** The default bound of one displayed line, in characters after escaping. */
export const MAX_DISPLAY_LINE = 500

/** Where the code point that ends just before `i` starts (a pair is one; a lone surrogate is its own). */
function codePointStartBefore(s: string, i: number): number {
  const low = s.charCodeAt(i - 1)
  const paired = low >= 0xdc00 && low <= 0xdfff && i >= 2 && (s.codePointAt(i - 2) as number) > 0xffff
  return paired ? i - 2 : i - 1
}

/** The code point that ends just before `i`, if any. */
function codePointBefore(s: string, i: number): number | undefined {
  return i > 0 ? s.codePointAt(codePointStartBefore(s, i)) : undefined
}

/**
 * The escaped text of `s` from its start (or, `fromEnd`, from its end back to `from`) within
 * `budget` characters, and how much of `s` it shows. Each code point is judged after the one
 * before it in `s` (needsEscapeAfter), also where the shown text starts.
 */
function escapedWithin(s: string, budget: number, fromEnd: boolean, from = 0): { text: string; shown: number } {
  const pieces: string[] = []
  let length = 0
  let shown = 0
  while (shown < s.length - from) {
    const start = fromEnd ? codePointStartBefore(s, s.length - shown) : shown
    const cp = s.codePointAt(start) as number
    const size = fromEnd ? s.length - shown - start : cp > 0xffff ? 2 : 1
    const piece = needsEscapeAfter(codePointBefore(s, start), cp) ? escapeOf(cp) : s.slice(start, start + size)
    if (length + piece.length > budget) break
    pieces.push(piece)
    length += piece.length
    shown += size
  }
  return { text: (fromEnd ? pieces.reverse() : pieces).join(''), shown }
}

/**
 * `s` as one line a person can read: escaped as escapeDisplayText does, the newline too. Longer
 * than `max` characters, it shows its start and its end around a visible `…[N characters not
 * shown]…` (N counts the original text), so what a long line ends with is never hidden.
 */
export function displayLine(s: string, max = MAX_DISPLAY_LINE): string {
  const whole = escapedWithin(s, max, false)
  if (whole.shown === s.length) return whole.text
  const head = escapedWithin(s, Math.ceil((max * 2) / 3), false)
  const tail = escapedWithin(s, Math.floor(max / 3), true, head.shown)
  return `${head.text}…[${s.length - head.shown - tail.shown} characters not shown]…${tail.text}`
}

/** Bounds of displayBlock. */
export interface DisplayBlockBounds {
  /** Each line's bound (displayLine's `max`). */
  maxLineLength?: number
  /** Lines shown from the start of a long text. */
  headLines?: number
  /** Lines shown from its end. */
  tailLines?: number
}

/** The quote mark that starts every line of a block: a forged line inside cannot look like a field. */
export const BLOCK_QUOTE = '| '

/**
 * `text` for a person: one line as displayLine shows it; several as a quoted block headed by its
 * line count (`(3 lines)`), each line escaped, bounded and quoted with `| `. A long text shows
 * its first and last lines and says how many are not shown. Only the block's own line breaks are
 * real newlines.
 */
export function displayBlock(text: string, bounds: DisplayBlockBounds = {}): string {
  const max = bounds.maxLineLength ?? MAX_DISPLAY_LINE
  const lines = text.split('\n')
  if (lines.length === 1) return displayLine(text, max)
  const head = bounds.headLines ?? 20
  const tail = bounds.tailLines ?? 10
  const quote = (line: string) => `${BLOCK_QUOTE}${displayLine(line, max)}`
  const shown =
    lines.length <= head + tail
      ? lines.map(quote)
      : [
          ...lines.slice(0, head).map(quote),
          `… ${lines.length - head - tail} lines not shown …`,
          ...lines.slice(lines.length - tail).map(quote),
        ]
  return [`(${lines.length} lines)`, ...shown].join('\n')
}

/**
 * Whether `s` holds a character a terminal would act on or an eye would not see (a raw control,
 * bidi or invisible one, or a stack of combining marks), the newline aside.
 */
export function holdsRawControl(s: string): boolean {
  let found = false
  let before: number | undefined
  forEachCodePoint(s, (cp) => {
    found = cp !== 0x0a && needsEscapeAfter(before, cp)
    before = cp
    return !found
  })
  return found
}
