// Which host programs a writable root holds, and whether a backend's read-only binds can keep
// each so: the package strictly inside a root can be, a root that is the package, or a runner
// outside the package, cannot. End to end in test/e2e/sandbox/state-in-grant.test.ts.
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxCapabilities } from '../../../../src/policy/backends.js'
import type { SandboxGrants } from '../../../../src/policy/grants.js'
import { hostPrograms, hostProgramsIn } from '../../../../src/sandbox/view/host-programs.js'
import { PACKAGE_ROOT } from '../../../../src/sandbox/view/protected-paths.js'

const grants = (writable: Array<{ path: string; kind: 'root' | 'extra' | 'temp' | 'cache' }>) =>
  ({ writable: writable.map((w) => ({ ...w, access: [] })) }) as unknown as SandboxGrants

const pkg = '/srv/app/node_modules/cordon'
const programs = [
  { path: pkg, what: "cordon's package" },
  { path: `${pkg}/build/Release/cordon-exec`, what: 'helper' },
  { path: '/srv/app/bin/bwrap', what: 'the bubblewrap runner' },
]

describe('hostPrograms', () => {
  it('names the package, the helper and each runner the verdict names', () => {
    const caps = {
      platform: 'linux',
      chain: ['bubblewrap'],
      backends: {
        bubblewrap: { backend: 'bubblewrap', usable: true, executable: '/usr/bin/bwrap', limitations: [], probeMs: 0 },
      },
    } as SandboxCapabilities
    const named = hostPrograms(caps).map((p) => p.path)
    expect(named[0]).toBe(PACKAGE_ROOT)
    expect(named).toContain('/usr/bin/bwrap')
  })
})

describe('hostProgramsIn', () => {
  it('the package strictly inside a root is protectable; a runner outside it is not', () => {
    const held = hostProgramsIn(grants([{ path: '/srv/app', kind: 'root' }]), programs, pkg)
    expect(held.map((h) => [h.path, h.protectable])).toEqual([
      [pkg, true],
      [`${pkg}/build/Release/cordon-exec`, true],
      ['/srv/app/bin/bwrap', false],
    ])
  })

  it('a root that is the package is not protectable; a temp or cache grant holding it counts too; siblings hold nothing', () => {
    expect(hostProgramsIn(grants([{ path: pkg, kind: 'extra' }]), programs, pkg)[0]).toMatchObject({
      root: pkg,
      protectable: false,
    })
    // A cache grant (cacheRoots: 'host') over an npx-installed package would let a run rewrite it.
    for (const kind of ['temp', 'cache'] as const)
      expect(hostProgramsIn(grants([{ path: '/srv/app', kind }]), programs, pkg)[0]).toMatchObject({
        root: '/srv/app',
        protectable: false,
      })
    expect(hostProgramsIn(grants([{ path: path.join('/srv', 'other'), kind: 'root' }]), programs, pkg)).toEqual([])
  })
})
