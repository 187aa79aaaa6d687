// The limit flags: sizes with binary suffixes, counts, every bad value named, and the policy they make.
import { describe, expect, it } from 'vitest'
import { limitsFrom, parseSize, withLimits } from '../../../src/cli/limit-flags.js'
import { policyFrom } from '../../../src/cli/policy-options.js'
import { UsageError } from '../../../src/cli/usage-error.js'

describe('limit flags', () => {
  it('sizes: bytes, K/M/G/T (binary), decimals, an optional B or iB', () => {
    expect(parseSize('512')).toBe(512)
    expect(parseSize('64K')).toBe(65536)
    expect(parseSize('2g')).toBe(2 * 1024 ** 3)
    expect(parseSize('1.5GiB')).toBe(1.5 * 1024 ** 3)
    expect(parseSize('256MB')).toBe(256 * 1024 ** 2)
    for (const bad of ['', '0', '-1', '12X', 'G', '1e9', '0.1']) expect(parseSize(bad), bad).toBeUndefined()
  })

  it('each flag sets its limit; none set none', () => {
    expect(limitsFrom({ 'max-processes': '50', 'max-memory': '256M', 'max-temp': '1G', 'max-cpu': '30' })).toEqual({
      processes: 50,
      memoryBytes: 256 << 20,
      tempBytes: 1 << 30,
      cpuSeconds: 30,
    })
    expect(limitsFrom({})).toBeUndefined()
  })

  it('every bad value is named in one usage error', () => {
    let error: unknown
    try {
      limitsFrom({ 'max-processes': '1.5', 'max-cpu': 'soon' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(UsageError)
    expect((error as Error).message).toContain('--max-processes: "1.5"')
    expect((error as Error).message).toContain('--max-cpu: "soon"')
  })

  it('the flags reach the resolved policy', () => {
    const { policy } = policyFrom({ 'max-memory': '1G', 'max-cpu': '5' }, '/')
    expect(policy.limits).toEqual({ memoryBytes: 1 << 30, cpuSeconds: 5 })
    expect(withLimits(policy, {})).toBe(policy)
  })
})
