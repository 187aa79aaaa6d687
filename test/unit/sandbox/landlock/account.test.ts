// The Landlock account: how the host's facts make each class hold or not.
import { describe, expect, it } from 'vitest'
import { landlockAccount } from '../../../../src/sandbox/landlock/account.js'

describe('the Landlock account', () => {
  const facts = {
    abi: 7,
    seccomp: true,
    supervisor: true,
    namespaces: { ipc: true, net: false, keys: true },
    uid0: true,
  }
  it('Landlock: read-only full with ABI 7, seccomp and the supervisor; each missing piece names its class', () => {
    expect(landlockAccount(facts, { mode: 'read-only' }).enforcement).toBe('full')
    expect(landlockAccount(facts, { mode: 'read-only' }).governed).toContain('signals')
    expect(landlockAccount(facts, { mode: 'workspace-write' }).ungoverned).toEqual(['metadata'])
    expect(landlockAccount({ ...facts, seccomp: false }, { mode: 'read-only' }).ungoverned).toEqual([
      'metadata',
      'processes',
      'keyrings',
      'terminals',
    ])
    expect(landlockAccount({ ...facts, abi: 5 }, { mode: 'read-only' }).ungoverned).toEqual(['processes'])
    expect(landlockAccount({ ...facts, supervisor: false }, { mode: 'read-only' }).ungoverned).toEqual(['lifetime'])
    // Without a mount namespace (unprivileged) /proc/keys still lists the user's key names.
    const unprivileged = { ...facts, uid0: false, namespaces: { ipc: false, net: false, keys: false } }
    expect(landlockAccount(unprivileged, { mode: 'read-only' }).ungoverned).toEqual(['keyrings'])
    // network: inherit promises nothing, but the account says what stays reachable.
    expect(landlockAccount(facts, { mode: 'read-only' }).classes.network?.how).toMatch(/unix sockets/)
    // network: deny refuses sockets but cannot close /proc/PID/net of host processes: partial, named.
    for (const net of [true, false]) {
      const deny = landlockAccount(
        { ...facts, namespaces: { ...facts.namespaces, net } },
        { mode: 'read-only', network: 'deny' },
      )
      expect(deny.enforcement).toBe('partial')
      expect(deny.ungoverned).toEqual(['network'])
      expect(deny.classes.network?.how).toMatch(/\/proc\/PID\/net/)
    }
    // RLIMIT_NPROC does not bind uid 0.
    expect(landlockAccount(facts, { mode: 'read-only', limits: { processes: 5 } }).ungoverned).toEqual(['resources'])
    expect(
      landlockAccount({ ...facts, uid0: false }, { mode: 'read-only', limits: { processes: 5 } }).enforcement,
    ).toBe('full')
  })
})
