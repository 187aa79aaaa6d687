// The classes every confined run promises, as each backend's account counts them.
import { describe, expect, it } from 'vitest'
import { promisedClasses } from '../../../../src/sandbox/confinement/account.js'

describe('promised classes', () => {
  it('every confined run promises the process, IPC, keyring, terminal and lifetime classes', () => {
    expect(promisedClasses({ mode: 'read-only' })).toEqual([
      'content',
      'names',
      'metadata',
      'processes',
      'ipc',
      'keyrings',
      'terminals',
      'lifetime',
    ])
    expect(promisedClasses({ mode: 'read-only', network: 'deny', limits: { processes: 10 } })).toEqual(
      expect.arrayContaining(['network', 'resources']),
    )
  })
})
