// Seatbelt's enforcement account: per class governed or not, with the reason; `partial` in every
// mode (no subreaper, no resource limits), never `full`; unverified until the probe's canary ran.
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { CONFINED_SANDBOX_MODES, EFFECT_CLASSES, NETWORK_POLICIES } from '../../../../src/policy/vocabulary.js'
import { renderSeatbeltProfile } from '../../../../src/sandbox/seatbelt/profile.js'
import {
  SEATBELT_EFFECT_CLASSES,
  seatbeltEffectClasses,
  seatbeltEnforcement,
} from '../../../../src/sandbox/seatbelt/account.js'

const ROOT = '/Users/dev/project'

function account(
  mode: (typeof CONFINED_SANDBOX_MODES)[number],
  network: (typeof NETWORK_POLICIES)[number],
  options: Parameters<typeof renderSeatbeltProfile>[1] = {},
  verified?: boolean,
) {
  return seatbeltEnforcement(renderSeatbeltProfile(grantsFor({ mode, workspaceRoot: ROOT, network }), options), {
    verified,
  })
}

describe('seatbeltEnforcement', () => {
  it.each(CONFINED_SANDBOX_MODES.flatMap((mode) => NETWORK_POLICIES.map((network) => ({ mode, network }))))(
    '$mode / network $network: partial, naming lifetime, resources and processes, with a reason for every class',
    ({ mode, network }) => {
      const a = account(mode, network)
      expect(a.backend).toBe('seatbelt')
      expect(a.enforcement).toBe('partial')
      expect(a.ungoverned).toEqual(['processes', 'lifetime', 'resources'])
      expect(a.classes.map((c) => c.class)).toEqual([...SEATBELT_EFFECT_CLASSES])
      for (const c of a.classes) expect(c.reason.length).toBeGreaterThan(20)
      for (const c of ['content', 'names', 'metadata', 'ipc', 'keyrings', 'terminals'] as const) {
        expect(a.governed).toContain(c)
      }
      expect(a.classes.find((c) => c.class === 'lifetime')!.reason).toMatch(/no subreaper/)
    },
  )

  it('network is promised only under deny, and then governed with loopback refused (reported)', () => {
    const deny = account('workspace-write', 'deny')
    const net = deny.classes.find((c) => c.class === 'network')!
    expect(net).toMatchObject({ promised: true, governed: true })
    expect(deny.limitations.join('\n')).toMatch(/loopback/)
    const inherit = account('workspace-write', 'inherit')
    expect(inherit.classes.find((c) => c.class === 'network')).toMatchObject({ promised: false, governed: false })
    expect(inherit.ungoverned).not.toContain('network')
  })

  it('ipc is ungoverned once POSIX semaphores are allowed; keyrings once a keychain service is', () => {
    expect(account('read-only', 'inherit', { posixSemaphores: true }).ungoverned).toContain('ipc')
    const keychain = account('read-only', 'inherit', { machServices: ['com.apple.SecurityServer'] })
    expect(keychain.ungoverned).toContain('keyrings')
    expect(keychain.classes.find((c) => c.class === 'keyrings')!.reason).toMatch(/com\.apple\.SecurityServer/)
  })

  it('is unverified unless the probe proved it, and says so', () => {
    const a = account('read-only', 'inherit')
    expect(a.verified).toBe(false)
    expect(a.limitations[0]).toMatch(/^unverified/)
    const b = account('read-only', 'inherit', {}, true)
    expect(b.verified).toBe(true)
    expect(b.limitations.join('\n')).not.toMatch(/unverified/)
  })

  it('speaks the current vocabulary too: signals (same sandbox) and network only where governed', () => {
    const classes = seatbeltEffectClasses(account('workspace-write', 'deny'))
    expect(classes).toEqual(['content', 'names', 'metadata', 'network', 'signals'])
    for (const c of classes) expect(EFFECT_CLASSES).toContain(c)
    expect(seatbeltEffectClasses(account('read-only', 'inherit'))).toEqual(['content', 'names', 'metadata', 'signals'])
  })
})
