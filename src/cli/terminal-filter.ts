/**
 * What of a confined command's output may reach the person's terminal. A command can print
 * escape sequences the terminal acts on: OSC 52 writes the clipboard, OSC 8 makes a link whose
 * target the text hides, DCS/APC/PM/SOS strings talk to the terminal or a multiplexer, and queries
 * (device status and attributes, DECRQSS, DECRQCRA, window reports) make the terminal type a reply
 * into the person's input. `cordon run` on a terminal (and `cordon shell`) passes plain text and an
 * allow-list of sequences: colours, cursor movement, erasing, scrolling, the screen modes full-screen
 * programs set (alternate screen, mouse, bracketed paste). Every other sequence is dropped whole,
 * every OSC included (titles too: a title can pose as a prompt) and every string.
 *
 * The filter is a state machine over characters that follows a terminal's (the VT500 parser of
 * xterm and its JavaScript port), so it cannot be told a sequence ended where the terminal sees it
 * go on: ESC in any state abandons what is held and starts a new escape, CAN and SUB abandon it,
 * and a C1 code is acted on anywhere. A terminal that reads UTF-8 acts on U+009B as on `ESC [`, U+009D as OSC,
 * U+0090 DCS, U+009F APC, U+009E PM, U+0098 SOS, and U+009C ends a string as `ESC \` does; the output
 * reaches the filter decoded (a streaming decoder), so the bytes C2 9B are the one character U+009B.
 * What it emits is text and whole allowed sequences, never part of one, so the terminal is back in
 * its ground state after each, whatever its parser makes of what was dropped. A sequence split across
 * chunks is still recognised: at most one unfinished sequence is held back. A terminal that reads
 * 8-bit controls outside UTF-8 is beyond any filter (UTF-8 text carries bytes 0x80-0x9F): the
 * sequences that switch a terminal to that (ESC % @, S8C1T, DECSCL) are dropped.
 */

const ESC = 0x1b
const BEL = 0x07
/** ENQ makes some terminals type their answerback message: dropped. */
const ENQ = 0x05
/** CAN and SUB abandon a sequence. */
const CAN = 0x18
const SUB = 0x1a
const DEL = 0x7f
/** C1 CSI (U+009B, bytes C2 9B in UTF-8). */
const CSI_C1 = 0x9b
/** C1 OSC (U+009D). */
const OSC_C1 = 0x9d
/** The C1 introducers of DCS, SOS, PM, APC strings (U+0090, U+0098, U+009E, U+009F). */
const STRING_C1 = new Set([0x90, 0x98, 0x9e, 0x9f])
/** The C1 codes passed as text: IND, NEL, HTS, RI (as `ESC D`, `ESC E`, `ESC H`, `ESC M`). */
const C1_KEPT = new Set([0x84, 0x85, 0x88, 0x8d])

/** The finals of two-character escapes that are kept: DECSC, DECRC, keypad modes, IND, NEL, HTS, RI, RIS. */
const ESC_KEPT = new Set('78=>DEHMc'.split('').map((c) => c.charCodeAt(0)))
/** The intermediates of the charset designations kept (`ESC ( B`, `ESC ) 0`…). */
const CHARSET_ESC = new Set('()*+'.split('').map((c) => c.charCodeAt(0)))
/** The finals after ESC that start a string: ] (OSC), P (DCS), X (SOS), ^ (PM), _ (APC), k (screen's title). */
const OSC_ESC = new Set([0x5d, 0x6b])
const STRING_ESC = new Set([0x50, 0x58, 0x5e, 0x5f])

/**
 * The CSI finals kept with any numeric parameters (no private marker, no intermediate): insert,
 * cursor movement, erase, insert and delete lines and characters, tabs, repeat, SGR, scroll region,
 * cursor save and restore. Not kept: queries and reports (c n x t y, `CSI ? … S`), printing (i),
 * modes other than those below.
 */
const CSI_PLAIN = new Set('@ABCDEFGHIJKLMPXZ`abdefgmrsu'.split('').map((c) => c.charCodeAt(0)))
/** The ANSI modes kept with `CSI … h`/`l`: insert (4), new line (20). Not the keyboard lock (2). */
const ANSI_MODES = new Set([4, 20])
/**
 * The DEC private modes kept with `CSI ? … h`/`l`: cursor keys, columns, scrolling, reverse video,
 * origin, wrap, autorepeat, mouse reports, cursor blink and visibility, reverse wrap, alternate screen,
 * keypad, margins, alternate scroll, meta key, bracketed paste, synchronised output. Not VT52 mode (2),
 * Tektronix mode (38), logging (46), nor the others.
 */
const DEC_MODES = new Set([
  1, 3, 4, 5, 6, 7, 8, 9, 12, 25, 45, 47, 66, 69, 1000, 1002, 1003, 1004, 1005, 1006, 1007, 1015, 1016, 1034, 1036,
  1039, 1047, 1048, 1049, 2004, 2026,
])

/** An unfinished sequence may not grow without bound (a command printing ESC ] and no end). */
const MAX_HELD = 4096

/** Where the filter is: text, an escape or a CSI (held), an OSC (ends at BEL or ST) or another string (at ST). */
type State = 'text' | 'esc' | 'csi' | 'osc' | 'string'

/** Whether `params` (of `CSI … h`/`l`) names only modes of `allowed`. */
function modesIn(params: string, allowed: ReadonlySet<number>): boolean {
  return params.split(';').every((p) => /^\d+$/.test(p) && allowed.has(Number(p)))
}

/** Whether a CSI with neither private marker nor intermediate, of `params` and `final`, is kept. */
function plainKept(params: string, final: string): boolean {
  if (CSI_PLAIN.has(final.charCodeAt(0))) return true
  if (final === 'S' || final === 'T') return !params.includes(';') // not XTHIMOUSE's five
  return (final === 'h' || final === 'l') && modesIn(params, ANSI_MODES)
}

/** Whether the CSI sequence `seq` (ESC [ or U+009B, parameters, intermediates, final) is one that is kept. */
function csiKept(seq: readonly number[]): boolean {
  const m = /^([<=>?]?)([0-9:;]*)([ -/]*)([@-~])$/.exec(fromCodes(seq.slice(seq[0] === ESC ? 2 : 1)))
  if (m === null) return false
  const [, marker, params, inter, final] = m as unknown as [string, string, string, string, string]
  if (params.includes(':') && final !== 'm') return false // sub-parameters: SGR colours only
  // Cursor style (DECSCUSR) and soft reset (DECSTR).
  if (inter !== '') return marker === '' && (inter + final === ' q' || inter + final === '!p')
  if (marker === '') return plainKept(params, final)
  if (marker === '?') {
    if (final === 'J' || final === 'K') return true // selective erase
    return (final === 'h' || final === 'l') && modesIn(params, DEC_MODES)
  }
  return marker + final === '>m' // modifyOtherKeys (XTMODKEYS): sets a mode, answers nothing
}

/** One stream's filter: feed chunks, get what may be shown. */
export class TerminalOutputFilter {
  private state: State = 'text'
  /** The escape or CSI being read (a string is dropped as it comes, never held). */
  private held: number[] = []
  /** The length of the string being dropped. */
  private stringLength = 0
  private dropped = 0

  /** The part of `chunk` the terminal may see (an unfinished sequence is held for the next chunk). */
  write(chunk: string): string {
    const out: number[] = []
    for (let i = 0; i < chunk.length; i++) this.step(chunk.charCodeAt(i), out)
    if (this.held.length > MAX_HELD || this.stringLength > MAX_HELD) {
      // Not a sequence any terminal would finish: drop it, and read what follows as text.
      this.abandon()
    }
    return fromCodes(out)
  }

  /** How many characters were dropped so far. */
  get droppedBytes(): number {
    return this.dropped
  }

  private step(code: number, out: number[]): void {
    if (this.anywhere(code, out)) return
    switch (this.state) {
      case 'text':
        out.push(code)
        return
      case 'esc':
        this.stepEscape(code, out)
        return
      case 'csi':
        this.stepCsi(code, out)
        return
      case 'osc':
      case 'string':
        this.dropped++
        this.stringLength++
        if (code === BEL && this.state === 'osc') this.abandon()
        return
    }
  }

  /** The transitions of every state: ESC, CAN, SUB, ENQ and the C1 codes. True when `code` was one. */
  private anywhere(code: number, out: number[]): boolean {
    if (code === ESC) this.start('esc', code)
    else if (code === CAN || code === SUB) {
      this.abandon()
      out.push(code) // harmless on its own
    } else if (code === ENQ) this.dropped++
    else if (code >= 0x80 && code <= 0x9f) this.c1(code, out)
    else return false
    return true
  }

  /** A C1 code, in any state: what is held is abandoned, and the code starts a sequence or is a control. */
  private c1(code: number, out: number[]): void {
    if (code === CSI_C1) this.start('csi', code)
    else if (code === OSC_C1) this.start('osc', code)
    else if (STRING_C1.has(code)) this.start('string', code)
    else {
      this.abandon()
      if (C1_KEPT.has(code)) out.push(code)
      else this.dropped++ // ST (U+009C), DECID's U+009A, and the rest
    }
  }

  private stepEscape(code: number, out: number[]): void {
    // A C0 control inside a sequence is acted on at once; 0x20-0x2F are intermediates.
    if (code < 0x20) out.push(code)
    else if (code === DEL) this.dropped++
    else if (code < 0x30) this.held.push(code)
    else if (code > 0x7e) {
      this.abandon() // not an escape: the character is text
      out.push(code)
    } else if (this.held.length > 1) {
      this.held.push(code)
      this.end(this.held.length === 3 && CHARSET_ESC.has(this.held[1] as number), out)
    } else if (code === 0x5b) {
      this.state = 'csi' // ESC [
      this.held.push(code)
    } else if (OSC_ESC.has(code)) this.start('osc', code)
    else if (STRING_ESC.has(code)) this.start('string', code)
    else {
      this.held.push(code)
      this.end(ESC_KEPT.has(code), out) // ESC \ (ST on its own), ESC Z (DECID)… dropped
    }
  }

  private stepCsi(code: number, out: number[]): void {
    if (code < 0x20) out.push(code)
    else if (code === DEL) this.dropped++
    else if (code > 0x7e) {
      this.abandon()
      out.push(code)
    } else {
      this.held.push(code)
      if (code >= 0x40) this.end(csiKept(this.held), out)
    }
  }

  /** Abandons what is held and starts `state` with `code`, its introducer. */
  private start(state: State, code: number): void {
    this.abandon()
    this.state = state
    if (state === 'esc' || state === 'csi') this.held = [code]
    else {
      this.dropped++
      this.stringLength = 1
    }
  }

  /** A finished escape or CSI: shown when `kept`, else dropped. */
  private end(kept: boolean, out: number[]): void {
    if (kept) {
      for (const b of this.held) out.push(b)
      this.held = []
    }
    this.abandon()
  }

  /** Drops what is held (a string's characters were counted as they came), back to text. */
  private abandon(): void {
    this.dropped += this.held.length
    this.held = []
    this.stringLength = 0
    this.state = 'text'
  }
}

/** The string of `codes`, built in slices (one call with a huge spread would overflow the stack). */
function fromCodes(codes: readonly number[]): string {
  let s = ''
  for (let i = 0; i < codes.length; i += 8192) s += String.fromCharCode(...codes.slice(i, i + 8192))
  return s
}

/**
 * The filter for what a relay writes to `out`, as `cordon run` applies it: none with `raw`
 * (`--raw-output`) or when `out` is not a terminal (a file or a pipe gets every byte).
 */
export function outputFilterFor(out: { isTTY?: boolean }, raw: boolean): ((text: string) => string) | undefined {
  if (raw || out.isTTY !== true) return undefined
  const filter = new TerminalOutputFilter()
  return (text) => filter.write(text)
}
