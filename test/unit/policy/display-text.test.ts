// Text a person approves or reads: every control, bidi and invisible character shows as a visible
// escape; a line stays one line; a multi-line text is a quoted block with its line count, bounded.
// A corpus of hostile strings and a property over arbitrary strings: nothing raw gets through.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  BLOCK_QUOTE,
  displayBlock,
  displayLine,
  escapeDisplayText,
  holdsRawControl,
  needsEscape,
  needsEscapeAfter,
} from '../../../src/policy/display-text.js'

/** Every C0 byte but the newline, DEL, and every C1 control. */
const CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, i) => i).filter((i) => i !== 0x0a),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
]
const BIDI = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]
const ZERO_WIDTH = [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff]
/** Characters an eye does not see (or sees as a plain space) that are neither controls nor zero-width. */
const INVISIBLE = [
  ...range(0x2061, 0x2064), // invisible operators
  0x034f, // combining grapheme joiner
  0x115f,
  0x1160,
  0x3164,
  0xffa0, // Hangul fillers
  ...range(0xfe00, 0xfe0f), // variation selectors (VS16 too)
  ...range(0xe0100, 0xe01ef), // variation selectors supplement
  ...range(0x180b, 0x180d), // Mongolian free variation selectors
  0x17b4,
  0x17b5, // Khmer inherent vowels
  ...range(0x206a, 0x206f), // deprecated format characters
  ...range(0xfff9, 0xfffb), // interlinear annotation
  ...range(0x1d173, 0x1d17a), // musical format characters
  0x2800, // braille blank
  0x00a0,
  0x1680,
  ...range(0x2000, 0x200a),
  0x202f,
  0x205f,
  0x3000, // every non-ASCII space
  0x2028,
  0x2029,
]

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}

/** An oracle independent of display-text.ts: what no rendering may hold raw (the newline aside). */
const UNSEEN =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}\u2800]|[^\P{Zs} ]|\p{M}\p{M}/u
function holdsUnseen(s: string): boolean {
  // A newline still separates what it separates: two marks on either side of one are not a stack.
  return UNSEEN.test(s.replace(/\n/g, ' '))
}

describe('escapeDisplayText', () => {
  it('shows each control, bidi and zero-width character as a visible escape', () => {
    expect(escapeDisplayText('git status\r\x1b[2Ktouch x')).toBe('git status\\r\\x1b[2Ktouch x')
    expect(escapeDisplayText('a\tb\x00\x7f\x9b')).toBe('a\\tb\\x00\\x7f\\x9b')
    expect(escapeDisplayText('ls \u202efdp.exe')).toBe('ls \\u202efdp.exe')
    expect(escapeDisplayText('rm\u200b -rf')).toBe('rm\\u200b -rf')
    expect(escapeDisplayText('tag\u{e0041}')).toBe('tag\\u{e0041}')
    for (const cp of [...CONTROLS, ...BIDI, ...ZERO_WIDTH]) {
      const shown = escapeDisplayText(`a${String.fromCodePoint(cp)}b`)
      expect(holdsRawControl(shown), `U+${cp.toString(16)}`).toBe(false)
      expect(shown.length).toBeGreaterThan(3)
    }
  })

  it('leaves the newline to the caller, and ordinary text (backslashes, unicode, emoji) unchanged', () => {
    expect(escapeDisplayText('a\nb')).toBe('a\nb')
    const plain = "printf 'a\\n' | grep -E '^(é|✓)$' # 😀 日本語 Ελληνικά русский עברית हिन्दी ệ 한국어"
    expect(escapeDisplayText(plain)).toBe(plain)
    expect(holdsRawControl(plain)).toBe(false)
  })

  it('shows invisible operators, fillers, variation selectors, odd spaces and the braille blank', () => {
    // The attack: `sh ./run\u2064.sh` read as `sh ./run.sh`.
    expect(escapeDisplayText('sh ./run\u2064.sh')).toBe('sh ./run\\u2064.sh')
    expect(escapeDisplayText('rm\u00a0-rf\u3000/')).toBe('rm\\xa0-rf\\u3000/')
    expect(escapeDisplayText('x\u{e0100}\u3164')).toBe('x\\u{e0100}\\u3164')
    for (const cp of INVISIBLE) {
      const raw = `a${String.fromCodePoint(cp)}b`
      expect(holdsUnseen(raw), `control: U+${cp.toString(16)} is unseen`).toBe(true)
      const shown = escapeDisplayText(raw)
      expect(holdsRawControl(shown), `U+${cp.toString(16)}`).toBe(false)
      expect(holdsUnseen(shown), `U+${cp.toString(16)}`).toBe(false)
      expect(shown).toMatch(/^a\\(x|u)[{0-9a-f]+}?b$/)
    }
  })

  it('keeps the first combining mark of a run, escapes every further one', () => {
    expect(escapeDisplayText('cafe\u0301')).toBe('cafe\u0301')
    expect(escapeDisplayText('e\u0301\u0302\u0303x')).toBe('e\u0301\\u0302\\u0303x')
    const zalgo = `ls${'\u0336\u0335\u0334'.repeat(30)} /`
    expect(holdsUnseen(zalgo)).toBe(true)
    expect(holdsUnseen(escapeDisplayText(zalgo))).toBe(false)
    expect(holdsRawControl(zalgo)).toBe(true)
    expect(needsEscapeAfter(undefined, 0x301)).toBe(false)
    expect(needsEscapeAfter(0x301, 0x301)).toBe(true)
    // Cut anywhere, a bounded line judges each mark after the one before it in the text.
    for (let max = 4; max < 40; max++) expect(holdsUnseen(displayLine(zalgo, max)), `max ${max}`).toBe(false)
  })

  it('emoji presentation selectors show as escapes (a choice: nothing unseen is shown as nothing)', () => {
    expect(escapeDisplayText('\u2764\ufe0f')).toBe('\u2764\\ufe0f')
  })

  it('shows lone surrogates, keeps a pair', () => {
    expect(escapeDisplayText('x\ud800y\udc00')).toBe('x\\ud800y\\udc00')
    expect(escapeDisplayText('\ud83d\ude00')).toBe('😀')
  })
})

describe('displayLine', () => {
  it('escapes the newline too: forged lines stay on the one line', () => {
    const forged = 'fix the build\n  command: git status'
    expect(displayLine(forged)).toBe('fix the build\\n  command: git status')
  })

  it('bounds a very long line: its start and its end around how much is not shown', () => {
    const long = `git status ${'a'.repeat(100_000)}; rm -rf ~\x1b`
    const shown = displayLine(long, 500)
    expect(shown).toMatch(/^git status a{323}…\[99525 characters not shown\]…a{152}; rm -rf ~\\x1b$/)
    // An escape or a surrogate pair is never cut in half.
    expect(displayLine('ab\x1bcdefgh\x1b', 6)).toBe('ab…[8 characters not shown]…')
    expect(displayLine(`${'😀'.repeat(10)}`, 6)).toBe('😀😀…[14 characters not shown]…😀')
  })
})

describe('displayBlock', () => {
  it('a single line reads as displayLine does', () => {
    expect(displayBlock('git status')).toBe('git status')
    expect(displayBlock('a\rb')).toBe('a\\rb')
  })

  it('a multi-line command is a quoted block headed by its line count', () => {
    expect(displayBlock('git status\ntouch /tmp/x\r')).toBe('(2 lines)\n| git status\n| touch /tmp/x\\r')
  })

  it('a 1,000-line command is bounded: its first and last lines, and how many are not shown', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `echo ${i}`).join('\n')
    const lines = displayBlock(text).split('\n')
    expect(lines[0]).toBe('(1000 lines)')
    expect(lines).toContain('… 970 lines not shown …')
    expect(lines[1]).toBe('| echo 0')
    expect(lines.at(-1)).toBe('| echo 999')
    expect(lines.length).toBe(32)
  })

  it('each line of a block is bounded', () => {
    const shown = displayBlock(`x\n${'b'.repeat(10_000)}`, { maxLineLength: 100 })
    expect(shown.split('\n')[2]).toBe(`| ${'b'.repeat(67)}…[9900 characters not shown]…${'b'.repeat(33)}`)
  })
})

describe('hostile corpus', () => {
  const corpus = [
    ...CONTROLS.map((cp) => `git status${String.fromCodePoint(cp)}touch /etc/x`),
    ...BIDI.map((cp) => `echo ${String.fromCodePoint(cp)}safe`),
    ...ZERO_WIDTH.map((cp) => `r${String.fromCodePoint(cp)}m -rf /`),
    ...INVISIBLE.map((cp) => `sh ./run${String.fromCodePoint(cp)}.sh`),
    `git status${'\u0301'.repeat(500)}; touch /etc/x`,
    `${'\u20d2\u0489'.repeat(1000)}\n${'\u0336'.repeat(1000)}`,
    `cat ${'\u00a0'.repeat(100)}${'\u2800'.repeat(100)}\u{e01ef}`,
    'git status\r\x1b[2K\x1b[1Atouch /etc/passwd',
    '\x1b]52;c;cHduZWQ=\x07\x9b6n\x90qdcs\x9c',
    'ok\n  command: git status\n  in: /safe',
    'x'.repeat(200_000),
    Array.from({ length: 1000 }, () => '\x1b[2K\r').join('\n'),
    '\ud800\udfff\udc00',
  ]

  it.each(corpus.map((s, i) => [i, s] as const))('string %i: no raw control in any rendering', (_, s) => {
    expect(holdsRawControl(escapeDisplayText(s))).toBe(false)
    expect(holdsUnseen(escapeDisplayText(s))).toBe(false)
    expect(holdsRawControl(displayLine(s))).toBe(false)
    expect(holdsUnseen(displayLine(s))).toBe(false)
    expect(holdsUnseen(displayBlock(s))).toBe(false)
    expect(displayLine(s)).not.toContain('\n')
    expect(holdsRawControl(displayBlock(s))).toBe(false)
    for (const line of displayBlock(s).split('\n').slice(1)) expect(line).toMatch(/^(\| |… \d+ lines not shown …$)/)
    expect(displayBlock(s).length).toBeLessThan(40 * 600)
  })
})

describe('property: nothing a terminal acts on survives', () => {
  const anyText = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.integer({ min: 0, max: 0x2070 }).map((cp) => String.fromCharCode(cp)) }),
    fc.string({ unit: fc.integer({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp)) }),
    fc.string({
      unit: fc.oneof(
        fc.constantFrom(
          ...[...INVISIBLE, 0x0301, 0x0336, 0x20d2, 0x0489, 0x0915, 0x093f].map((cp) => String.fromCodePoint(cp)),
        ),
        fc.constantFrom('a', ' ', '\n', '\x1b', '\ud800', '😀'),
      ),
    }),
  )

  it('escapeDisplayText, displayLine and displayBlock hold no raw control; displayLine holds no newline', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const line = displayLine(s)
        const block = displayBlock(s)
        return (
          !holdsRawControl(escapeDisplayText(s)) &&
          !holdsUnseen(escapeDisplayText(s)) &&
          !holdsRawControl(line) &&
          !holdsUnseen(line) &&
          !holdsUnseen(block) &&
          !line.includes('\n') &&
          !holdsRawControl(block) &&
          block
            .split('\n')
            .slice(1)
            .every((l) => l.startsWith(BLOCK_QUOTE) || l.startsWith('… '))
        )
      }),
      { numRuns: 2000 },
    )
  })

  it('a bounded line keeps its bound, holds no raw control and no half of an escape or a pair', () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 4, max: 40 }), (s, max) => {
        const line = displayLine(s, max)
        const visible = line.replace(/…\[\d+ characters not shown\]…/, '')
        // A pair cut in half would leave a lone surrogate, which holdsRawControl reports.
        return !holdsRawControl(line) && !holdsUnseen(line) && visible.length <= max
      }),
      { numRuns: 2000 },
    )
  })

  it('needsEscape covers every code point below U+00A0 but printable ASCII', () => {
    for (let cp = 0; cp < 0xa0; cp++) expect(needsEscape(cp)).toBe(cp < 0x20 || cp >= 0x7f)
  })
})
