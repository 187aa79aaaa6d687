// A run's network refusals as text: each destination escaped (IPv6 in brackets), its reason in
// plain words, at most MAX_REFUSALS_SHOWN named, the rest (and those past the facts cap) counted.
import { describe, expect, it } from 'vitest'
import { holdsRawControl } from '../../../../src/policy/display-text.js'
import {
  destinationText,
  MAX_REFUSALS_SHOWN,
  moreText,
  REFUSAL_WORDS,
  refusalText,
  shownRefusals,
} from '../../../../src/policy/network/refusals.js'

describe('refusal texts', () => {
  it('a destination: host:port, an IPv6 address bracketed, controls escaped', () => {
    expect(destinationText('a.example', 443)).toBe('a.example:443')
    expect(destinationText('fe80::1', 80)).toBe('[fe80::1]:80')
    const hostile = destinationText('x\x1b]0;t\x07y', 1)
    expect(hostile).toBe('x\\x1b]0;t\\x07y:1')
    expect(holdsRawControl(hostile)).toBe(false)
  })

  it('a refusal: its tries when more than one, and its reason in words', () => {
    expect(refusalText({ host: 'a.example', port: 443, count: 1, reason: 'not-allowed' })).toBe(
      'a.example:443: not in the allow-list',
    )
    expect(refusalText({ host: 'b.example', port: 80, count: 4, reason: 'denied' })).toBe(
      `b.example:80 (4 tries): ${REFUSAL_WORDS.denied}`,
    )
    expect(REFUSAL_WORDS.address).toMatch(/private, loopback or link-local/)
    expect(REFUSAL_WORDS['server-name']).toMatch(/TLS hello named another server.*or could not be read whole/)
  })

  it('at most five named, the rest and the omitted counted', () => {
    const refused = Array.from({ length: 8 }, (_, i) => ({
      host: `h${i}`,
      port: 1,
      count: 1,
      reason: 'not-allowed' as const,
    }))
    const { shown, more } = shownRefusals({ refused, allowed: [], refusedOmitted: 2 })
    expect(MAX_REFUSALS_SHOWN).toBe(5)
    expect(shown.map((r) => r.host)).toEqual(['h0', 'h1', 'h2', 'h3', 'h4'])
    expect(more).toBe(5)
    expect(shownRefusals(undefined)).toEqual({ shown: [], more: 0 })
    expect(moreText(5)).toBe('and 5 more')
    expect(moreText(0)).toBeUndefined()
  })
})
