// explainSeatbelt on any platform: the exact profile a Mac would apply, the launch argv and the
// account, for a policy; danger-full-access has nothing to explain.
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { renderSeatbeltProfile } from '../../../../src/sandbox/seatbelt/profile.js'
import { explainSeatbelt } from '../../../../src/sandbox/seatbelt/explain.js'
import { invalid } from '../../../support/invalid.js'

const ROOT = '/Users/dev/project'

describe('explainSeatbelt', () => {
  it('returns the rendered profile, the argv with the profile elided, and the account', () => {
    const policy = { mode: 'workspace-write' as const, workspaceRoot: ROOT, network: 'deny' as const }
    const e = explainSeatbelt(policy, { tempDir: '/tmp/cordon-x', tty: '/dev/ttys001' })
    const expected = renderSeatbeltProfile(grantsFor(policy, { tempDir: '/tmp/cordon-x' }), {
      tempDir: '/tmp/cordon-x',
      tty: '/dev/ttys001',
    })
    expect(e.profile).toBe(expected.profile)
    expect(e.argv).toEqual(['/usr/bin/sandbox-exec', '-p', '<profile>', '--', '/bin/sh', '-c', '<command>'])
    expect(e.rendered.writable).toEqual([ROOT, '/private/tmp/cordon-x'])
    expect(e.account).toMatchObject({ backend: 'seatbelt', enforcement: 'partial', verified: false, network: 'deny' })
    expect(JSON.parse(JSON.stringify(e))).toEqual(e)
  })

  it('takes the command shown and the probe’s verdict', () => {
    const e = explainSeatbelt({ mode: 'read-only', workspaceRoot: ROOT }, { command: ['make', 'test'], verified: true })
    expect(e.argv.slice(-3)).toEqual(['--', 'make', 'test'])
    expect(e.account.verified).toBe(true)
  })

  it('refuses danger-full-access and a malformed policy', () => {
    expect(invalid(() => explainSeatbelt({ mode: 'danger-full-access', workspaceRoot: ROOT })).issues[0]).toMatch(
      /danger-full-access/,
    )
    expect(invalid(() => explainSeatbelt({ mode: 'read-only', workspaceRoot: 'relative' })).issues[0]).toMatch(
      /workspaceRoot/,
    )
  })
})
