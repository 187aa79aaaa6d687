/**
 * What of a confined command's output may reach the person's terminal. A command can print
 * escape sequences the terminal acts on: OSC 52 writes the clipboard, OSC 0/2 retitle the window,
 * DCS/APC/PM/SOS strings talk to the terminal or a multiplexer, and the query sequences (device
 * status, device attributes, window reports) make the terminal type a reply into the person's
 * input. `cordon run` on a terminal drops those (a flag turns the filter off) and keeps the rest:
 * colours, cursor movement, erasing. The filter is a state machine over characters, so a sequence split
 * across chunks is still recognised, and at most one unfinished sequence is held back. It knows
 * the C1 forms too: a terminal that reads UTF-8 acts on U+009B as on `ESC [`, U+009D as OSC,
 * U+0090 DCS, U+009F APC, U+009E PM, U+0098 SOS, and U+009C ends a string as `ESC \` does (the
 * output reaches the filter decoded, so the bytes C2 9B are the one character U+009B).
 */

const ESC = 0x1b
const BEL = 0x07
/** C1 CSI (U+009B, bytes C2 9B in UTF-8). */
const CSI_C1 = 0x9b
/** C1 ST (U+009C): ends an OSC, DCS, APC, PM or SOS string. */
const ST_C1 = 0x9c
/** The C1 introducers of strings: DCS, SOS, PM, OSC, APC. */
const STRING_C1 = new Set([0x90, 0x98, 0x9e, 0x9d, 0x9f])

/** The CSI final bytes whose sequences make the terminal answer or act on its window: dropped. */
const CSI_DROPPED = new Set([
  0x63, // c: device attributes (the terminal replies)
  0x6e, // n: device status report (the terminal replies)
  0x74, // t: window manipulation and reports
  0x71, // q (with a space intermediate: cursor style; with >: terminal version report)
  0x70, // p (with $: mode reports)
])

/** An unfinished sequence may not grow without bound (a command printing ESC ] and no end). */
const MAX_HELD = 4096

type State = 'text' | 'esc' | 'csi' | 'string' | 'string-esc'

/** The finals after ESC that start a string: ] (OSC), P (DCS), _ (APC), ^ (PM), X (SOS). */
const STRING_ESC = new Set([0x5d, 0x50, 0x5f, 0x5e, 0x58])

/** The state a character in plain text starts: a sequence's (ESC, C1 CSI, a C1 string), else undefined. */
function introducedBy(code: number): State | undefined {
  if (code === ESC) return 'esc'
  if (code === CSI_C1) return 'csi'
  return STRING_C1.has(code) ? 'string' : undefined
}

/** One stream's filter: feed chunks, get what may be shown. */
export class TerminalOutputFilter {
  private state: State = 'text'
  private held: number[] = []
  /** Whether the string sequence being read is kept (never, today) or dropped. */
  private dropped = 0

  /** The part of `chunk` the terminal may see (an unfinished sequence is held for the next chunk). */
  write(chunk: string): string {
    const out: number[] = []
    for (let i = 0; i < chunk.length; i++) this.step(chunk.charCodeAt(i), out)
    if (this.held.length > MAX_HELD) {
      // Not a sequence any terminal would finish: drop what was held.
      this.dropped += this.held.length
      this.held = []
      this.state = 'text'
    }
    return fromCodes(out)
  }

  /** How many bytes were dropped so far. */
  get droppedBytes(): number {
    return this.dropped
  }

  private step(byte: number, out: number[]): void {
    switch (this.state) {
      case 'text': {
        const started = introducedBy(byte)
        if (started === undefined) out.push(byte)
        else {
          this.state = started
          this.held = [byte]
        }
        return
      }
      case 'esc':
        this.held.push(byte)
        if (byte === 0x5b)
          this.state = 'csi' // ESC [
        else if (STRING_ESC.has(byte)) this.state = 'string'
        else this.flush(out) // a two-byte escape (ESC 7, ESC c…): kept
        return
      case 'csi':
        this.held.push(byte)
        if (byte >= 0x40 && byte <= 0x7e) {
          if (CSI_DROPPED.has(byte)) this.drop()
          else this.flush(out)
        }
        return
      case 'string':
        this.held.push(byte)
        if (byte === BEL || byte === ST_C1) this.drop()
        else if (byte === ESC) this.state = 'string-esc'
        return
      case 'string-esc':
        this.held.push(byte)
        if (byte === 0x5c)
          this.drop() // ESC \ (ST)
        else this.state = 'string'
        return
    }
  }

  private flush(out: number[]): void {
    for (const b of this.held) out.push(b)
    this.held = []
    this.state = 'text'
  }

  private drop(): void {
    this.dropped += this.held.length
    this.held = []
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
