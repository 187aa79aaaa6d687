/**
 * Where a cut through UTF-8 text falls inside a character: a tail cut at a byte count may start
 * in the middle of one, and a read before the stream ends may stop in the middle of another.
 */

/** Count of leading UTF-8 continuation bytes (at most 3): where a cut split a character. */
export function leadingContinuationBytes(bytes: Buffer): number {
  let n = 0
  while (n < 3 && n < bytes.length && (bytes[n]! & 0xc0) === 0x80) n += 1
  return n
}

/** Length of an incomplete multi-byte character at the end of `bytes[start..]` (0 if none). */
export function incompleteTrailingBytes(bytes: Buffer, start: number): number {
  for (let i = bytes.length - 1; i >= Math.max(start, bytes.length - 4); i--) {
    const b = bytes[i]!
    if ((b & 0xc0) === 0x80) continue
    if (b < 0xc0) return 0
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2
    const have = bytes.length - i
    return have < need ? have : 0
  }
  return 0
}
