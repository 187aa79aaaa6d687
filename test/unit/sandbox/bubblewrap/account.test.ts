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

  it("metadata: the mounts govern it, the host's device nodes included; read-only keeps it in the run's own dirs", () => {
    const ro = bubblewrapAccount(facts, { mode: 'read-only' }).classes.metadata
    const ww = bubblewrapAccount(facts, { mode: 'workspace-write' }).classes.metadata
    expect(ro?.governed).toBe(true)
    expect(ro?.how).toMatch(/device nodes included/)
    expect(ro?.how).toMatch(/in the run's own temp dir and \/dev\/shm they work/)
    expect(ww?.how).not.toMatch(/temp dir/)
    expect(ww?.how).toMatch(/terminal the run is handed/)
  })
})
