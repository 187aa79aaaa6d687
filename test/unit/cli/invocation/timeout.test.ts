// `--timeout MS`: digits only, 1 to MAX_TIMER_DELAY_MS (above it, Node's timer fires after 1 ms).
import { describe, expect, it } from 'vitest'
import { timeoutFrom } from '../../../../src/cli/invocation/timeout.js'
import { MAX_TIMER_DELAY_MS } from '../../../../src/subprocess/spec/limits.js'

describe('timeoutFrom', () => {
  it('absent is undefined; plain digits are milliseconds, up to the maximum', () => {
    expect(timeoutFrom(undefined)).toBeUndefined()
    expect(timeoutFrom('1')).toBe(1)
    expect(timeoutFrom('030000')).toBe(30_000)
    expect(timeoutFrom(String(MAX_TIMER_DELAY_MS))).toBe(2 ** 31 - 1)
  })

  it('anything else says what is wrong', () => {
    for (const text of ['-5', '1.5', 'abc', '1e3', '0x10', ' 5', '5 ', '', '+5', '1_000']) {
      expect(() => timeoutFrom(text)).toThrow(
        `--timeout: "${text}" is not a whole number of milliseconds (digits only, e.g. --timeout 30000)`,
      )
    }
    expect(() => timeoutFrom('0')).toThrow('--timeout: must be at least 1 ms (0 would end the command at once)')
    expect(() => timeoutFrom('000')).toThrow('must be at least 1 ms')
  })

  it('above what a timer holds: refused, naming the maximum', () => {
    for (const text of [String(MAX_TIMER_DELAY_MS + 1), '3000000000', '99999999999999', '9'.repeat(400)]) {
      expect(() => timeoutFrom(text)).toThrow(
        `--timeout: ${text} ms is more than a timer can hold: at most 2147483647 ms (about 24.9 days)`,
      )
    }
  })
})
