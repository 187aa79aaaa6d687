// The escape filter of `cordon run` on a terminal: the sequences a terminal would act on against
// the person (clipboard, title, links, queries that type into their input, DCS/APC strings) are
// dropped, an allow-list (colours, cursor movement, screen modes) kept, the sequences read as a
// VT500 terminal reads them, and a sequence split across chunks is recognised.
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

  // The bypasses an attacker found: the filter passed a held escape or CSI when ESC, CAN/SUB or a
  // C1 code came next, where a terminal restarts, abandons or starts a sequence; and queries it
  // did not know. Each is checked whole, split at every point, and one character a chunk.
  const bypasses: [string, string, string][] = [
    ['ESC ESC OSC 52 (clipboard)', `${ESC}${ESC}]52;c;ZXZpbA==\x07`, ''],
    ['ESC ESC OSC 0 (title)', `${ESC}${ESC}]0;pwned\x07`, ''],
    ['ESC [ ESC OSC 8 (hyperlink)', `${ESC}[${ESC}]8;;http://evil/${ESC}\\click${ESC}]8;;${ESC}\\`, 'click'],
    ['ESC then C1 OSC 52', `${ESC}\u009d52;c;MTIz\x07`, ''],
    ['ESC [ then C1 OSC 52', `${ESC}[\u009d52;;MTIz\x07`, ''],
    ['CSI abandoned by CAN, then OSC 52', `${ESC}[1\x18${ESC}]52;c;MTIz\x07`, '\x18'],
    ['CSI abandoned by SUB, then OSC 52', `${ESC}[1\x1a${ESC}]52;c;MTIz\x07`, '\x1a'],
    ['ESC ESC DCS DECRQSS (a reply)', `${ESC}${ESC}P$qm${ESC}\\`, ''],
    ['DECID (ESC Z)', `${ESC}Z`, ''],
    ['DECREQTPARM (CSI x)', `${ESC}[x`, ''],
    ['DECRQCRA (checksum of the screen)', `${ESC}[1;1;1;1;10;10*y`, ''],
    ['XTSMGRAPHICS query', `${ESC}[?1;1S`, ''],
    ['screen/tmux title (ESC k)', `${ESC}kpwned${ESC}\\`, ''],
  ]
  const splits = (s: string): string[][] => [
    [s],
    s.split(''),
    ...Array.from({ length: s.length - 1 }, (_, i) => [s.slice(0, i + 1), s.slice(i + 1)]),
  ]

  it.each(bypasses)('the bypass %s is dropped, also split across chunks', (_name, attack, expected) => {
    for (const chunks of splits(`a${attack}b`)) expect(pass(chunks)).toBe(`a${expected}b`)
  })

  it('ESC in a string ends it and starts a new escape; CAN, SUB and a C1 code end it too', () => {
    expect(pass([`${ESC}]0;t${ESC}${ESC}]52;c;eA==\x07x`])).toBe('x')
    expect(pass([`${ESC}P${ESC}[1mx`])).toBe(`${ESC}[1mx`)
    expect(pass([`${ESC}]0;t\x18${ESC}[2Jx`])).toBe(`\x18${ESC}[2Jx`)
    expect(pass([`${ESC}]0;t\u0085x`])).toBe('\u0085x')
    // BEL ends an OSC, not a DCS or an APC (only ST does): what follows is dropped with them.
    expect(pass([`${ESC}P1\x07hidden${ESC}\\x`, `${ESC}_a\x07hidden\u009cy`])).toBe('xy')
  })

  it('drops the other queries and the modes that change how the terminal parses or answers', () => {
    const dropped = [
      '\x05', // ENQ: answerback
      `${ESC}[?6n`, // cursor position report
      `${ESC}[>q`, // XTVERSION
      `${ESC}[?12$p`, // DECRQM
      `${ESC}[?u`, // kitty keyboard query
      `${ESC}[?2l`, // VT52 mode
      `${ESC}[?38h`, // Tektronix mode
      `${ESC}[2h`, // keyboard lock
      `${ESC}[5i`, // printer on
      `${ESC}[62;1"p`, // DECSCL (8-bit controls)
      `${ESC} G`, // S8C1T
      `${ESC}%@`, // out of UTF-8
      `${ESC}[1;2;3;4;5T`, // XTHIMOUSE
      `${ESC}[22;0;0t`, // title stack
      `${ESC}\\`, // a stray ST
      '\u009a', // C1 DECID
      '\u009c', // a stray C1 ST
    ]
    for (const seq of dropped) expect(pass([`a${seq}b`]), JSON.stringify(seq)).toBe('ab')
    // A CSI that does not end is dropped once too long; what comes after it is text.
    expect(pass([`a${ESC}[1;2;${'9'.repeat(5000)}`, 'b'])).toBe('ab')
  })

  it('keeps what ordinary programs print: ls and git colours, progress bars, vim- and htop-like screens', () => {
    const kept = [
      `${ESC}[0m${ESC}[01;34mdir${ESC}[0m  ${ESC}[01;32mrun.sh${ESC}[0m\n`,
      `${ESC}[33mcommit 0c995bc${ESC}[m\n${ESC}[1;31m-old${ESC}[m${ESC}[K\n`,
      `\r${ESC}[2K[=====     ] 50%${ESC}[1A${ESC}[1G${ESC}[?25l${ESC}[?25h`,
      `${ESC}[?1049h${ESC}[?1h${ESC}=${ESC}[H${ESC}[2J${ESC}[1;24r${ESC}[?2004h${ESC}[?1004h${ESC}[?1000h${ESC}[?1006h`,
      `${ESC}[38;2;255;0;0mX${ESC}[38:5:196mY${ESC}[2 q${ESC}[>4;2m${ESC}[5;10H${ESC}[3X${ESC}[2@${ESC}[4P`,
      `${ESC}[1L${ESC}[1M${ESC}[2S${ESC}[T${ESC}[10d${ESC}[5G${ESC}[3b${ESC}M${ESC}7${ESC}8${ESC}[4h${ESC}[4l`,
      `${ESC}(0lqqk${ESC}(B${ESC}[m${ESC})0${ESC}[?1049l${ESC}[?1l${ESC}>${ESC}[!p${ESC}c${ESC}[s${ESC}[u`,
      `${ESC}[?7h${ESC}[39;49m${ESC}[3J${ESC}[?1J${ESC}D${ESC}E${ESC}H${ESC}[3g${ESC}[2Z\t\x07\b`,
      '\u009b1mred\u009b0m \u0085 héllo ✓ 𝄞',
    ]
    for (const text of kept) {
      for (const chunks of splits(text)) expect(pass(chunks), JSON.stringify(text)).toBe(text)
    }
  })

  it('a C0 control inside an escape or a CSI is acted on at once, as a terminal does', () => {
    expect(pass([`${ESC}[1\n2m`])).toBe(`\n${ESC}[12m`)
    expect(pass([`${ESC}\r7`])).toBe(`\r${ESC}7`)
    expect(pass([`${ESC}[1\r2n`])).toBe('\r')
  })

  it('outputFilterFor: a terminal is filtered, a pipe or --raw-output is not', () => {
    expect(outputFilterFor({ isTTY: true }, false)?.('a\x1b[6nb')).toBe('ab')
    expect(outputFilterFor({ isTTY: true }, true)).toBeUndefined()
    expect(outputFilterFor({}, false)).toBeUndefined()
  })
})
