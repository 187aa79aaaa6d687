// Which places are cordon's state (every private-parent candidate, the one in use, the config
// dir; another user's too) and which writable grants hold one: equal or containing, root or extra,
// never a temp or cache grant. End to end (plan, CLI, the attack) in test/e2e/sandbox/state-in-grant.test.ts.
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isStateInGrantError } from '../../../../src/policy/errors.js'
import type { SandboxGrants } from '../../../../src/policy/grants.js'
import { checkOwnState, ownStateInGrants, ownStatePlaces } from '../../../../src/sandbox/view/own-state.js'
import { scratchDir } from '../../../support/scratch.js'

const base = scratchDir('cordon-own-state')
const home = path.join(base, 'home')
const env = { HOME: home, XDG_RUNTIME_DIR: path.join(base, 'run'), XDG_CONFIG_HOME: path.join(base, 'cfg') }

const grants = (writable: Array<{ path: string; kind: 'root' | 'extra' | 'temp' | 'cache' }>) =>
  ({ writable: writable.map((w) => ({ ...w, access: [] })) }) as unknown as SandboxGrants

describe('ownStatePlaces', () => {
  it('names every private-parent candidate, the parent in use and the config dir, each once', () => {
    const paths = ownStatePlaces(env, undefined, path.join(base, 'in-use')).map((p) => p.path)
    expect(paths).toEqual(
      expect.arrayContaining([
        path.join(base, 'in-use'),
        path.join(base, 'run', 'cordon'),
        path.join(home, '.cache', 'cordon'),
        path.join(base, 'cfg', 'cordon'),
      ]),
    )
    expect(new Set(paths).size).toBe(paths.length)
  })

  it("adds another user's candidates and config dir", () => {
    const other = path.join(base, 'other')
    const paths = ownStatePlaces(env, { uid: 65534, gid: 65534, home: other }).map((p) => p.path)
    expect(paths).toEqual(
      expect.arrayContaining([path.join(other, '.cache', 'cordon'), path.join(other, '.config', 'cordon')]),
    )
  })
})

describe('ownStateInGrants and checkOwnState', () => {
  const places = ownStatePlaces(env)

  it('finds a root or extra that equals or contains a place', () => {
    expect(ownStateInGrants(grants([{ path: path.join(home, '.cache'), kind: 'extra' }]), places)).toMatchObject({
      root: path.join(home, '.cache'),
      place: { path: path.join(home, '.cache', 'cordon') },
    })
    expect(ownStateInGrants(grants([{ path: path.join(base, 'cfg', 'cordon'), kind: 'root' }]), places)?.root).toBe(
      path.join(base, 'cfg', 'cordon'),
    )
  })

  it('finds a root that is, holds or lies inside the user config dir (later runs read their rules from it)', () => {
    const cfg = path.join(base, 'cfg', 'cordon')
    for (const [root, kind] of [
      [cfg, 'root'],
      [path.join(base, 'cfg'), 'extra'],
      [path.join(cfg, 'profiles'), 'extra'],
    ] as const) {
      const found = ownStateInGrants(grants([{ path: root, kind }]), places)
      expect(found, root).toMatchObject({ root, place: { path: cfg } })
      expect(() => checkOwnState(grants([{ path: root, kind }]), places)).toThrow(/configuration directory/)
    }
  })

  it('finds a root inside a place (the parent holds other sessions)', () => {
    const inside = path.join(home, '.cache', 'cordon', 'sessions')
    expect(ownStateInGrants(grants([{ path: inside, kind: 'extra' }]), places)?.root).toBe(inside)
  })

  it('ignores a sibling, temp and cache grants inside the parent', () => {
    const fine = grants([
      { path: path.join(home, '.cache-other'), kind: 'root' },
      { path: path.join(home, '.cache', 'cordon', 'sessions', 'x', 'tmp'), kind: 'temp' },
      { path: path.join(home, '.cache', 'cordon', 'cache'), kind: 'cache' },
      { path: path.join(home, 'project'), kind: 'extra' },
    ])
    expect(ownStateInGrants(fine, places)).toBeUndefined()
    expect(() => checkOwnState(fine, places)).not.toThrow()
  })

  it('throws a StateInGrantError naming the root, the place and why', () => {
    try {
      checkOwnState(grants([{ path: home, kind: 'root' }]), places)
      expect.unreachable()
    } catch (error) {
      expect(isStateInGrantError(error)).toBe(true)
      expect(error).toMatchObject({ root: home, path: path.join(home, '.cache', 'cordon') })
      expect((error as Error).message).toMatch(/private directory/)
    }
  })
})
