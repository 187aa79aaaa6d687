// Policy grants -> Landlock rights masks, per ABI; rule shapes; the (dev, ino) cache key; the LRU.
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../src/policy/grants.js'
import { isInvalidRequestError } from '../../src/policy/errors.js'
import {
  FILE_RIGHTS,
  FS,
  handledFsFor,
  handledNetFor,
  NET,
  planRuleset,
  RulesetBuildError,
  RulesetCache,
  rulesetAttrSize,
  rightsFor,
  SCOPE,
  scopedFor,
  type LandlockSyscalls,
  type PathInspector,
} from '../../src/sandbox/landlock.js'
import { landlockEnforcement } from '../../src/sandbox/enforcement.js'

const dirs = new Map<string, number>([
  ['/', 2],
  ['/work/ws', 100],
  ['/work/extra', 101],
  ['/tmp/cordon-tmp-s-abc', 102],
])
const files = new Map<string, number>([
  ['/dev/null', 5],
  ['/dev/zero', 6],
  ['/dev/urandom', 7],
])
const fakeFs: PathInspector = (p) => {
  const d = dirs.get(p)
  if (d !== undefined) return { dev: 1, ino: d, directory: true }
  const f = files.get(p)
  if (f !== undefined) return { dev: 9, ino: f, directory: false }
  return undefined // /dev/tty missing here
}

const RO = grantsFor({ mode: 'read-only', workspaceRoot: '/work/ws' })

describe('Landlock rights per ABI', () => {
  it('handles bits 0..12 at ABI 1, adds REFER (2), TRUNCATE (3), IOCTL_DEV (5)', () => {
    expect(handledFsFor(0)).toBe(0)
    expect(handledFsFor(1)).toBe(0x1fff)
    expect(handledFsFor(2)).toBe(0x3fff)
    expect(handledFsFor(3)).toBe(0x7fff)
    expect(handledFsFor(4)).toBe(0x7fff)
    expect(handledFsFor(5)).toBe(0xffff)
    expect(handledFsFor(7)).toBe(0xffff)
  })

  it('handles TCP only when the network is denied and the ABI has it; scopes from ABI 6', () => {
    expect(handledNetFor(3, 'deny')).toBe(0)
    expect(handledNetFor(4, 'deny')).toBe(NET.BIND_TCP | NET.CONNECT_TCP)
    expect(handledNetFor(7, 'inherit')).toBe(0)
    expect(scopedFor(5)).toBe(0)
    expect(scopedFor(6)).toBe(SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL)
  })

  it('sizes the ruleset attr for the ABI', () => {
    expect([1, 3, 4, 5, 6, 7].map(rulesetAttrSize)).toEqual([8, 8, 16, 16, 24, 24])
  })

  it('maps access words to rights', () => {
    expect(rightsFor(['read', 'execute'])).toBe(FS.READ_FILE | FS.READ_DIR | FS.EXECUTE)
    expect(rightsFor(['remove'])).toBe(FS.REMOVE_DIR | FS.REMOVE_FILE)
    expect(rightsFor(['ioctl-dev', 'truncate', 'refer'])).toBe(FS.IOCTL_DEV | FS.TRUNCATE | FS.REFER)
  })
})

describe('planRuleset', () => {
  it('read-only: / read+execute, file-only rights on devices, missing devices skipped', () => {
    const plan = planRuleset(RO, 7, fakeFs)
    expect(plan.handledFs).toBe(0xffff)
    expect(plan.scoped).toBe(3)
    expect(plan.handledNet).toBe(0)
    expect(plan.attrSize).toBe(24)
    expect(plan.rules.map((r) => [r.path, r.allowed])).toEqual([
      ['/', FS.READ_FILE | FS.READ_DIR | FS.EXECUTE],
      ['/dev/null', FS.READ_FILE | FS.WRITE_FILE | FS.TRUNCATE],
      ['/dev/zero', FS.READ_FILE],
      ['/dev/urandom', FS.READ_FILE],
    ])
    for (const rule of plan.rules) if (!rule.directory) expect(rule.allowed & ~FILE_RIGHTS).toBe(0)
  })

  it('workspace-write: the root, extra roots and temp dir get the writable rights, never device creation', () => {
    const grants = grantsFor(
      { mode: 'workspace-write', workspaceRoot: '/work/ws', writableRoots: ['/work/extra'], network: 'deny' },
      { tempDir: '/tmp/cordon-tmp-s-abc' },
    )
    const plan = planRuleset(grants, 7, fakeFs)
    const writable = plan.rules.filter((r) => r.origin === 'writable')
    expect(writable.map((r) => r.path)).toEqual(['/work/ws', '/work/extra', '/tmp/cordon-tmp-s-abc'])
    for (const rule of writable) {
      expect(rule.allowed & (FS.MAKE_CHAR | FS.MAKE_BLOCK)).toBe(0)
      expect(rule.allowed & FS.WRITE_FILE).toBeTruthy()
      expect(rule.allowed & FS.REFER).toBeTruthy()
      expect(rule.allowed & FS.TRUNCATE).toBeTruthy()
    }
    expect(plan.handledNet).toBe(3)
    expect(plan.handledFs & (FS.MAKE_CHAR | FS.MAKE_BLOCK)).toBe(FS.MAKE_CHAR | FS.MAKE_BLOCK)
  })

  it('cuts rights to what an older ABI handles', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: '/work/ws' })
    const plan = planRuleset(grants, 1, fakeFs)
    expect(plan.attrSize).toBe(8)
    expect(plan.scoped).toBe(0)
    for (const rule of plan.rules) expect(rule.allowed & ~0x1fff).toBe(0)
  })

  it('never skips a missing workspace root', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: '/work/gone' })
    try {
      planRuleset(grants, 7, fakeFs)
      expect.unreachable()
    } catch (error) {
      expect(isInvalidRequestError(error)).toBe(true)
      expect(String(error)).toContain('/work/gone')
    }
  })

  it('keys the cache by (dev, ino): a recreated root is a different ruleset', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: '/work/ws' })
    const before = planRuleset(grants, 7, fakeFs).key
    expect(planRuleset(grants, 7, fakeFs).key).toBe(before)
    const recreated: PathInspector = (p) => (p === '/work/ws' ? { dev: 1, ino: 999, directory: true } : fakeFs(p))
    expect(planRuleset(grants, 7, recreated).key).not.toBe(before)
    expect(planRuleset({ ...grants, network: 'deny' }, 7, fakeFs).key).not.toBe(before)
    expect(planRuleset(RO, 7, fakeFs).key).not.toBe(before)
  })
})

describe('RulesetCache', () => {
  function fakeSys() {
    let next = 100
    const open = new Set<number>()
    const sys: LandlockSyscalls & { open: Set<number>; failOn?: string } = {
      open,
      landlockCreateRuleset: () => {
        open.add(next)
        return next++
      },
      landlockAddPathRule: (_fd, path) => (path === sys.failOn ? 22 : 0),
      closeFd: (fd) => {
        if (!open.delete(fd)) throw new Error(`double close ${fd}`)
      },
    }
    return sys
  }

  it('hits, evicts the least recently used, and closes everything on clear', () => {
    const sys = fakeSys()
    const cache = new RulesetCache(sys, { capacity: 2, retireAfterMs: 0 })
    const a = planRuleset(RO, 7, fakeFs)
    const b = planRuleset({ ...RO, network: 'deny' }, 7, fakeFs)
    const c = planRuleset(grantsFor({ mode: 'workspace-write', workspaceRoot: '/work/ws' }), 7, fakeFs)
    const fa = cache.get(a)
    expect(cache.get(a)).toBe(fa)
    const fb = cache.get(b)
    cache.get(a) // a is now most recent
    cache.get(c) // evicts b
    expect(sys.open.has(fb)).toBe(false)
    expect(sys.open.has(fa)).toBe(true)
    expect(cache.openFds).toBe(2)
    cache.clear()
    expect(sys.open.size).toBe(0)
  })

  it('keeps an evicted fd open for the grace period, then closes it (clear closes it too)', () => {
    const sys = fakeSys()
    const cache = new RulesetCache(sys, { capacity: 1, retireAfterMs: 60_000 })
    const fa = cache.get(planRuleset(RO, 7, fakeFs))
    cache.get(planRuleset({ ...RO, network: 'deny' }, 7, fakeFs))
    expect(sys.open.has(fa)).toBe(true)
    expect(cache.openFds).toBe(2)
    cache.clear()
    expect(sys.open.size).toBe(0)
  })

  it('closes a half-built ruleset when the kernel refuses a rule', () => {
    const sys = fakeSys()
    sys.failOn = '/dev/null'
    const cache = new RulesetCache(sys)
    expect(() => cache.get(planRuleset(RO, 7, fakeFs))).toThrow(RulesetBuildError)
    expect(sys.open.size).toBe(0)
  })
})

describe('enforcement accounting', () => {
  it('read-only is full only with ABI >= 5 and seccomp; workspace-write is never full', () => {
    expect(landlockEnforcement({ abi: 7, seccomp: true }, 'read-only', 'inherit').enforcement).toBe('full')
    expect(landlockEnforcement({ abi: 7, seccomp: true }, 'read-only', 'deny').enforcement).toBe('full')
    expect(landlockEnforcement({ abi: 7, seccomp: false }, 'read-only', 'inherit')).toMatchObject({
      enforcement: 'partial',
      ungoverned: ['metadata'],
    })
    expect(landlockEnforcement({ abi: 4, seccomp: true }, 'read-only', 'inherit')).toMatchObject({
      enforcement: 'partial',
      ungoverned: ['content'],
    })
    expect(landlockEnforcement({ abi: 1, seccomp: true }, 'read-only', 'inherit').ungoverned).toEqual([
      'content',
      'names',
    ])
    expect(landlockEnforcement({ abi: 7, seccomp: true }, 'workspace-write', 'inherit')).toMatchObject({
      enforcement: 'partial',
      ungoverned: ['metadata'],
    })
    expect(landlockEnforcement({ abi: 7, seccomp: false }, 'read-only', 'deny').ungoverned).toEqual([
      'metadata',
      'network',
    ])
  })
})
