// Which classes a plan closes whole, read from the plan: no /dev/shm of its own, no /dev/pts of
// its own, socket(AF_UNIX) refused under a cut network (every socket() without a private network
// namespace); and the flags that open each. Pure: plans written as data.
import { describe, expect, it } from 'vitest'
import { CLOSED_CLASS_REMEDIES } from '../../../../src/policy/remedies.js'
import { type ClosingPlan, closedBy } from '../../../../src/sandbox/closed-classes/closing-plan.js'

const landlock = (network: 'inherit' | 'deny', privateNet = network === 'deny'): ClosingPlan => ({
  backend: 'landlock',
  policy: { network },
  seccomp: { input: { network, privateNet } },
})
const bubblewrap = (network: 'inherit' | 'deny'): ClosingPlan => ({
  backend: 'bubblewrap',
  policy: { network },
  seccomp: { input: { network, privateNet: network === 'deny', privateDevpts: true } },
  mounts: { shm: '/private/session/shm' },
})
const classes = (plan: ClosingPlan) => closedBy(plan).map((c) => [c.class, c.remedy])

describe('closedBy', () => {
  it('Landlock closes shared memory and new ptys; bubblewrap gives both (the control)', () => {
    expect(classes(landlock('inherit'))).toEqual([
      ['shared-memory', '--backend bubblewrap'],
      ['terminals', '--backend bubblewrap'],
    ])
    expect(classes(bubblewrap('inherit'))).toEqual([])
  })

  it('a cut network closes unix sockets on both backends, every socket without a private namespace', () => {
    expect(classes(bubblewrap('deny'))).toEqual([['unix-sockets', '--network inherit']])
    expect(classes(landlock('deny'))).toContainEqual(['unix-sockets', '--network inherit'])
    expect(classes(landlock('deny', false))).toContainEqual(['sockets', '--network inherit'])
  })

  it('under an allow-list the way out is dropping it (--network inherit cannot be added to one)', () => {
    const plan = { ...bubblewrap('deny'), policy: { network: { allow: ['example.com'] } } }
    expect(classes(plan)).toEqual([['unix-sockets', CLOSED_CLASS_REMEDIES.allowList]])
  })

  it('a plan without a seccomp program (Seatbelt) closes nothing it could be blamed for', () => {
    expect(closedBy({ backend: 'seatbelt', policy: { network: 'deny' } })).toEqual([])
  })

  it('says why in words naming the backend', () => {
    expect(closedBy(landlock('inherit'))[0]?.why).toBe(
      "/dev/shm is closed under landlock (the host's is shared, and no private one is mounted)",
    )
  })
})
