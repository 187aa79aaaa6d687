// A usable backend's accounts for every confined mode and network, as its capability reports them:
// each account as the backend gave it, the enforcement read from it, and what it governs taken
// from the account with network denied.
import { describe, expect, it } from 'vitest'
import type { EnforcementAccount } from '../../../../src/policy/backends.js'
import type { ConfinedSandboxMode } from '../../../../src/policy/vocabulary.js'
import { accountsFor } from '../../../../src/sandbox/probe/accounts.js'

/** A stand-in backend: read-only holds in full; workspace-write leaves keyrings, and network unless denied. */
function account(mode: ConfinedSandboxMode, network: 'inherit' | 'deny'): EnforcementAccount {
  const ungoverned = [
    ...(mode === 'workspace-write' ? (['keyrings'] as const) : []),
    ...(network === 'inherit' ? (['network'] as const) : []),
  ]
  const governed = (['content', 'names', 'network'] as const).filter((c) => !ungoverned.some((u) => u === c))
  return {
    enforcement: ungoverned.length === 0 ? 'full' : 'partial',
    classes: {},
    governed: [...governed],
    ungoverned: [...ungoverned],
  }
}

describe('accountsFor', () => {
  const capability = accountsFor(account)

  it('asks for each mode and network and keeps each account as given', () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      expect(capability.accounts?.[mode]).toEqual({ inherit: account(mode, 'inherit'), deny: account(mode, 'deny') })
    }
  })

  it('reads the enforcement of each account', () => {
    expect(capability.enforcement).toEqual({
      'read-only': { inherit: 'partial', deny: 'full' },
      'workspace-write': { inherit: 'partial', deny: 'partial' },
    })
  })

  it('takes what each mode governs from its account with network denied', () => {
    expect(capability.governs).toEqual({
      'read-only': ['content', 'names', 'network'],
      'workspace-write': ['content', 'names', 'network'],
    })
  })
})
