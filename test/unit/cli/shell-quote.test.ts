// Shell quoting of one word: safe words stay as they are, anything else is single-quoted, and bash
// reads every quoted word back byte for byte (checked by running bash over generated words).
import { execFileSync } from 'node:child_process'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { shellQuote } from '../../../src/cli/shell-quote.js'

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
