import { escapeOf, holdsRawControl, needsEscapeAfter } from '../policy/display-text.js'

/** POSIX shell quoting of one word, so `cordon run -- echo 'a b'` runs exactly `echo 'a b'`. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_/.,:=@%+^-]+$/.test(word)) return word
  return `'${word.replace(/'/g, `'\\''`)}'`
}

/** `\uHHHH` or `\UHHHHHHHH`: bash writes the character's UTF-8 bytes (its `\xHH` writes one byte). */
function bashUnicodeEscape(cp: number): string {
  return cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`
}

/**
 * One word for a person to read and paste into bash: as shellQuote quotes it, or, when it holds
 * a control, bidi or invisible character, in bash's `$'…'` form with each such character escaped,
 * so nothing in it acts on the terminal and bash (in a UTF-8 locale) still reads back the very word.
 */
export function displayShellWord(word: string): string {
  if (!holdsRawControl(word) && !word.includes('\n')) return shellQuote(word)
  let out = ''
  let before: number | undefined
  for (const ch of word) {
    const cp = ch.codePointAt(0) as number
    if (ch === '\\' || ch === "'") out += `\\${ch}`
    else if (!needsEscapeAfter(before, cp)) out += ch
    else out += cp < 0x80 ? escapeOf(cp) : bashUnicodeEscape(cp)
    before = cp
  }
  return `$'${out}'`
}
