// Name suffixes for cordon's own files: 12 hex digits, different on every draw.
import { describe, expect, it } from 'vitest'
import { uniqueSuffix } from '../../../../src/subprocess/private-dirs/unique-name.js'

describe('uniqueSuffix', () => {
  it('is 12 lower-case hex digits, leading zeros kept', () => {
    for (let i = 0; i < 1000; i++) expect(uniqueSuffix()).toMatch(/^[0-9a-f]{12}$/)
  })

  it('does not repeat over many draws', () => {
    const drawn = new Set(Array.from({ length: 10_000 }, uniqueSuffix))
    expect(drawn.size).toBe(10_000)
  })
})
