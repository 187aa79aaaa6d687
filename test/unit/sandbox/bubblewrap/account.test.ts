// The bubblewrap account: how the host's facts make each class hold or not.
import { describe, expect, it } from 'vitest'
import { bubblewrapAccount } from '../../../../src/sandbox/bubblewrap/account.js'

describe('the bubblewrap account', () => {
  const facts = {
    abi: 7,
    seccomp: true,
    supervisor: true,
    namespaces: { ipc: true, net: false, keys: true },
    uid0: true,
  }
  it('bubblewrap: full in both modes; without Landlock inside, content is not', () => {
    expect(bubblewrapAccount(facts, { mode: 'workspace-write', network: 'deny' }).enforcement).toBe('full')
    expect(bubblewrapAccount({ ...facts, abi: 0 }, { mode: 'workspace-write' }).ungoverned).toEqual(['content'])
  })
})
