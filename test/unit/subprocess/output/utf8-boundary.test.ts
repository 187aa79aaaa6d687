// Cuts through UTF-8 text: the continuation bytes a cut left at the start, and the incomplete
// character a read stopped inside at the end, for characters of every length.
import { describe, expect, it } from 'vitest'
import { incompleteTrailingBytes, leadingContinuationBytes } from '../../../../src/subprocess/output/utf8-boundary.js'

const CHARACTERS = ['a', 'é', '€', '𝄞'] // 1, 2, 3 and 4 bytes

describe('leadingContinuationBytes', () => {
  it('counts the bytes of a character cut at its start', () => {
    for (const ch of CHARACTERS) {
      const bytes = Buffer.from(`${ch}x`)
      for (let cut = 0; cut < bytes.length - 1; cut++)
        expect(leadingContinuationBytes(bytes.subarray(cut)), `${ch} cut at ${cut}`).toBe(
          cut === 0 ? 0 : Buffer.byteLength(ch) - cut,
        )
    }
  })
})

describe('incompleteTrailingBytes', () => {
  it('holds back exactly an incomplete last character', () => {
    for (const ch of CHARACTERS) {
      const whole = Buffer.from(`x${ch}`)
      const n = Buffer.byteLength(ch)
      expect(incompleteTrailingBytes(whole, 0), ch).toBe(0)
      for (let have = 1; have < n; have++)
        expect(incompleteTrailingBytes(whole.subarray(0, 1 + have), 0), `${ch} with ${have}`).toBe(have)
    }
  })

  it('never reaches before `start`', () => {
    const bytes = Buffer.from('€').subarray(0, 2)
    expect(incompleteTrailingBytes(bytes, 2)).toBe(0)
  })
})
