// The ruleset cache's handles: hits, LRU eviction that keeps held handles open, fail closed once
// closed, and no half-built ruleset left open.
import { describe, expect, it } from 'vitest'
import { FS, type LandlockSyscalls, planRuleset, RulesetBuildError } from '../../../../src/sandbox/ruleset/landlock.js'
import { RulesetCache } from '../../../../src/sandbox/ruleset/cache.js'
import { MASKS } from '../../../support/sandbox/landlock-fixtures.js'

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
      landlockAddPathRule: (_fd, path) => (path === sys.failOn ? -22 : 0),
      closeFd: (fd) => {
        if (!open.delete(fd)) throw new Error(`double close ${fd}`)
      },
    }
    return sys
  }
  const plan = (ino: number) =>
    planRuleset([{ path: `/p${ino}`, rights: FS.WRITE_FILE, origin: 'writable' }], MASKS, () => ({
      dev: 1,
      ino,
      directory: true,
    }))

  it('hits, evicts the least recently used (still open while held), and closes everything on clear', () => {
    const sys = fakeSys()
    const cache = new RulesetCache(sys, { capacity: 2 })
    const a = cache.get(plan(1))
    expect(cache.get(plan(1))).toBe(a)
    const b = cache.get(plan(2))
    cache.get(plan(1))
    cache.get(plan(3)) // evicts b, which we still hold: it stays open
    expect(b.closed).toBe(false)
    expect(sys.open.has(b.fd)).toBe(true)
    expect(cache.openFds).toBe(3)
    cache.clear()
    expect(sys.open.size).toBe(0)
    // A handle closed by its sandbox reads closed: a spec holding it fails closed at spawn.
    expect(a.closed && b.closed).toBe(true)
    expect(() => cache.get(plan(1))).toThrow(/after clear/)
  })

  it('closes a half-built ruleset when the kernel refuses a rule', () => {
    const sys = fakeSys()
    sys.failOn = '/p1'
    const cache = new RulesetCache(sys)
    expect(() => cache.get(plan(1))).toThrow(RulesetBuildError)
    expect(sys.open.size).toBe(0)
  })
})
