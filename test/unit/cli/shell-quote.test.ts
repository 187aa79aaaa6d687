// Shell quoting of one word: safe words stay as they are, anything else is single-quoted, and bash
// reads every quoted word back byte for byte (checked by running bash over generated words).
import { execFileSync } from 'node:child_process'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { displayShellWord, shellQuote } from '../../../src/cli/shell-quote.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'

/** What bash makes of `words`, quoted and joined as `cordon run` does. */
function bashReads(words: readonly string[]): string[] {
  const script = `printf '%s\\0' ${words.map(shellQuote).join(' ')}`
  const out = execFileSync('bash', ['-c', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  })
  return out.split('\0').slice(0, -1)
}

describe('shellQuote', () => {
  it('leaves safe words unquoted', () => {
    for (const word of ['ls', '-la', '/usr/bin/env', 'a=b', 'x,y', 'user@host:path', '50%', '+x', '^'])
      expect(shellQuote(word)).toBe(word)
  })

  it('single-quotes everything else, the empty word and single quotes included', () => {
    expect(shellQuote('')).toBe("''")
    expect(shellQuote('a b')).toBe("'a b'")
    expect(shellQuote('$HOME')).toBe("'$HOME'")
    expect(shellQuote("it's")).toBe("'it'\\''s'")
    expect(shellQuote('*')).toBe("'*'")
    expect(shellQuote('~')).toBe("'~'")
    expect(shellQuote('a\nb')).toBe("'a\nb'")
  })

  it('bash reads the quoted words back exactly', () => {
    const tricky = fc.constantFrom(
      ...["'", '"', '\\', '$', '`', '!', ' ', '\n', '\t', '*', '?', '[', ']', '{', '}', '~', '#', ';', '&', '|'],
      ...['<', '>', '(', ')', '=', '%', '-', 'é', '€', '$(id)', '${x}', "'\\''", 'a', '0'],
    )
    const word = fc
      .array(fc.oneof(tricky, fc.string({ maxLength: 4 })), { maxLength: 6 })
      .map((parts) => parts.join(''))
    // Every generated word through one bash: a spawn per property run starved under a loaded CI.
    const words = fc.sample(word, { numRuns: 480, seed: Date.now() >>> 0 }).filter((w) => !w.includes('\0'))
    expect(bashReads(words)).toEqual(words)
  })
})

describe('displayShellWord', () => {
  /** What bash makes of `words`, each written as displayShellWord shows it (one bash for all). */
  const bashReadsShown = (words: readonly string[]) =>
    execFileSync('bash', ['-c', `printf '%s\\0' ${words.map(displayShellWord).join(' ')}`], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    })
      .split('\0')
      .slice(0, -1)

  it("quotes a plain word as shellQuote does; a word with controls in $'…' with visible escapes", () => {
    expect(displayShellWord("/work/it's")).toBe(shellQuote("/work/it's"))
    expect(displayShellWord("/tmp/a\r\x1b[2K\u202e'\\\n")).toBe("$'/tmp/a\\r\\x1b[2K\\u202e\\'\\\\\\n'")
    expect(displayShellWord('c1\u009b tag\u{e0041}')).toBe("$'c1\\u009b tag\\U000e0041'")
    // Invisible characters and a stack of combining marks: the second mark on is escaped.
    expect(displayShellWord('run\u2064.sh')).toBe("$'run\\u2064.sh'")
    expect(displayShellWord('e\u0301\u0302\u0303')).toBe("$'e\u0301\\u0302\\u0303'")
  })

  it('over generated words: nothing raw reaches the terminal, and bash reads back the very word', () => {
    const unit = fc.oneof(
      fc.constantFrom('\x1b', '\r', '\n', '\t', '\x7f', '\u009b', '\u202e', '\u200b', '\ufeff', "'", '\\', '\u{e0041}'),
      fc.constantFrom('\u2064', '\u00a0', '\u3164', '\ufe0f', '\u0301', '\u0336', '\u2800', '\u{e0100}'),
      fc.string({ minLength: 1, maxLength: 3 }),
    )
    const words = fc
      .sample(fc.array(unit, { minLength: 1, maxLength: 8 }), { numRuns: 300, seed: 21 })
      .map((parts) => parts.join('').replace(/\0/g, ''))
    for (const word of words) {
      const shown = displayShellWord(word)
      expect(holdsRawControl(shown) || shown.includes('\n'), JSON.stringify(shown)).toBe(false)
    }
    expect(bashReadsShown(words)).toEqual(words)
  })
})
