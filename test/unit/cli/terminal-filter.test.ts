// The escape filter of `cordon run` on a terminal: the sequences a terminal would act on against
// the person (clipboard, title, queries that type into their input, DCS/APC strings) are dropped,
// colours and cursor movement kept, and a sequence split across chunks is recognised.
import { describe, expect, it } from 'vitest'
import { outputFilterFor, TerminalOutputFilter } from '../../../src/cli/terminal-filter.js'

const ESC = '\x1b'
const pass = (chunks: string[]) => {
  const f = new TerminalOutputFilter()
  return chunks.map((c) => f.write(c)).join('')
}

describe('TerminalOutputFilter', () => {
  it('drops OSC 52 (clipboard), OSC 0/2 (title), with BEL or ST, also split across chunks', () => {
    expect(pass([`a${ESC}]52;c;cHduZWQ=\x07b`])).toBe('ab')
    expect(pass([`a${ESC}]0;evil title${ESC}\\b`])).toBe('ab')
    expect(pass([`a${ESC}]5`, '2;c;eA==', '\x07b'])).toBe('ab')
    expect(pass([`a${ESC}`, ']2;t', `${ESC}`, '\\b'])).toBe('ab')
  })

  it('drops DCS, APC, PM and SOS strings, and the queries a terminal answers into the input', () => {
    expect(pass([`${ESC}P+q544e${ESC}\\x`])).toBe('x')
    expect(pass([`${ESC}_payload${ESC}\\x`])).toBe('x')
    expect(pass([`${ESC}[6nx`, `${ESC}[cy`, `${ESC}[>0cz`, `${ESC}[21t!`])).toBe('xyz!')
  })

  it('keeps colours, cursor movement, erasing and plain text, unicode included', () => {
    const kept = `${ESC}[1;31mred${ESC}[0m ${ESC}[2K${ESC}[10;5H ${ESC}7${ESC}8 héllo ✓`
    expect(pass([kept])).toBe(kept)
  })

  it('an unfinished string that never ends is dropped once it is too long, and the text after it passes', () => {
    const f = new TerminalOutputFilter()
    expect(f.write(`${ESC}]52;c;${'A'.repeat(5000)}`)).toBe('')
    expect(f.write('after')).toBe('after')
    expect(f.droppedBytes).toBeGreaterThan(5000)
    expect(new TerminalOutputFilter().write('x'.repeat(100_000)).length).toBe(100_000)
  })

  it('knows the C1 forms (UTF-8 C2 9B, C2 9D…): CSI queries, OSC, DCS, APC, PM and SOS strings, ST', () => {
    expect(pass(['a\u009b6nb', '\u009bc', 'c'])).toBe('abc')
    expect(pass(['a\u009d52;c;eA==\u009cb', '\u009d0;t\x07c'])).toBe('abc')
    expect(pass(['\u0090+q544e\u009cx', '\u009fapc\u009cy', '\u009epm', '\u009cz', '\u0098sos\u009c!'])).toBe('xyz!')
    // Split across chunks, and ended by ESC \ as well.
    expect(pass(['a\u009d52;c;', 'eA==\x1b', '\\b'])).toBe('ab')
    // A C1 CSI that only colours is kept; so is plain text around C1 characters that start nothing.
    expect(pass(['\u009b1mred\u009b0m \u0085'])).toBe('\u009b1mred\u009b0m \u0085')
    // The bytes as UTF-8 carries them, decoded as a pty or a pipe decodes them.
    expect(pass([Buffer.from([0x61, 0xc2, 0x9b, 0x36, 0x6e, 0x62]).toString('utf8')])).toBe('ab')
  })

  it('outputFilterFor: a terminal is filtered, a pipe or --raw-output is not', () => {
    expect(outputFilterFor({ isTTY: true }, false)?.('a\x1b[6nb')).toBe('ab')
    expect(outputFilterFor({ isTTY: true }, true)).toBeUndefined()
    expect(outputFilterFor({}, false)).toBeUndefined()
  })
})
