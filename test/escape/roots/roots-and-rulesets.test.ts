// Ruleset lifetime and root identity (issue 10, classes 7 and 8), per backend and user, each in
// a host process of that user (one per user, every backend side by side):
// - a read-only spec whose ruleset was evicted still runs read-only, never under the wider
//   ruleset that evicted it (control: the wider one writes); after dispose() both specs fail
//   closed at spawn, with the old fd numbers reused, and nothing runs;
// - a workspace root swapped for a symlink between two runs of a session is ROOT_CHANGED; a root
//   inside another writable root, or reached through a symlink inside one, is refused (controls:
//   a plain shell follows the symlink out; a run granted the outer root can make the swap);
// - system directories, host temp dirs and pseudo-filesystems are refused as roots, saying why
//   (as root also proc, sysfs, devpts and cgroup2 mounted elsewhere, in a private mount namespace).
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { backendStatus, gateFor, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import type { AttackUser } from '../attacks/attack.js'
import { NOBODY, runScenario, USERS } from '../host/run-as.js'
import { REFUSED_ROOTS, type RootsOutcome } from './roots-scenario.js'
import type { RulesetOutcome } from './rulesets-scenario.js'
import { scratchDirAs } from '../../support/scratch.js'

const gates = new Map<SandboxBackendName, ReturnType<typeof gateFor>>()
const reasons = new Map<SandboxBackendName, string>()
for (const backend of TEST_BACKENDS) {
  const status = await backendStatus(backend)
  gates.set(backend, gateFor(status))
  reasons.set(backend, status.reason)
}
const usable = TEST_BACKENDS.filter((b) => gates.get(b) === 'run')

/** A directory per usable backend, owned by `user`, inside one base of theirs. */
function dirsFor(user: AttackUser, label: string): { base: string; cases: Array<{ backend: string; root: string }> } {
  const base = scratchDirAs(user, `cordon-${label}`)
  const cases = usable.map((backend) => {
    const root = path.join(base, backend)
    fs.mkdirSync(root)
    if (user === 'nobody') fs.chownSync(root, NOBODY, NOBODY)
    return { backend, root }
  })
  return { base, cases }
}

async function rulesets(user: AttackUser): Promise<Map<string, RulesetOutcome>> {
  const { base, cases } = dirsFor(user, 'rulesets')
  const results = await runScenario<RulesetOutcome[]>(user, 'rulesets', base, { cases })
  return new Map(cases.map((c, i) => [c.backend, results[i]!]))
}

async function roots(user: AttackUser): Promise<Map<string, RootsOutcome>> {
  const { base, cases } = dirsFor(user, 'roots')
  // root mounts pseudo-filesystems, in a mount namespace of its own; nobody cannot mount at all
  const privateMounts = user === 'root'
  const prefix = privateMounts ? ['unshare', '-m', '--propagation', 'private'] : []
  const results = await runScenario<RootsOutcome[]>(user, 'roots', base, { cases, privateMounts }, { prefix })
  return new Map(cases.map((c, i) => [c.backend, results[i]!]))
}

const rulesetRuns = new Map(USERS.map((u) => [u, rulesets(u)]))
const rootRuns = new Map(USERS.map((u) => [u, roots(u)]))
for (const p of [...rulesetRuns.values(), ...rootRuns.values()]) p.catch(() => undefined)

for (const backend of TEST_BACKENDS) {
  const gate = gates.get(backend)!
  for (const user of USERS) {
    const title = `ruleset lifetime and root identity as ${user} [${backend}]`
    if (gate === 'fail') {
      describe(title, () => {
        it(`requires the ${backend} backend (CORDON_REQUIRE_BACKENDS)`, () => {
          throw new Error(`backend ${backend} is required but unusable: ${reasons.get(backend)}`)
        })
      })
      continue
    }
    describe.skipIf(gate === 'skip')(gate === 'skip' ? `${title} (skipped: ${reasons.get(backend)})` : title, () => {
      let rs: RulesetOutcome
      let ro: RootsOutcome
      beforeAll(async () => {
        rs = (await rulesetRuns.get(user)!).get(backend)!
        ro = (await rootRuns.get(user)!).get(backend)!
      }, 300_000)

      it('control: the workspace-write spec that evicted the read-only ruleset writes in the root', () => {
        expect(rs.widerAfterEviction.stdout, JSON.stringify(rs)).toContain('WROTE')
        expect(rs.widerAfterEviction.wrote, JSON.stringify(rs)).toEqual(['from-workspace-write'])
        expect(rs.openRulesets, 'the evicted ruleset stays open while its spec lives').toBe(2)
      })
      it('a read-only spec whose ruleset was evicted still runs read-only, never under the wider ruleset', () => {
        const a = rs.readOnlyAfterEviction
        expect(a.ran, JSON.stringify(a)).toBe(true)
        expect(a.stdout, JSON.stringify(a)).not.toContain('WROTE')
        expect(a.wrote, JSON.stringify(a)).toEqual([])
      })
      it('after dispose(), with the old fd numbers reused, both specs fail closed at spawn and nothing runs', () => {
        for (const a of [rs.readOnlyAfterDispose, rs.widerAfterDispose]) {
          const ctx = JSON.stringify(a)
          expect(a.refused, ctx).toMatch(/SpawnError|SandboxUnavailableError/)
          expect(a.ran, ctx).toBe(false)
          expect(a.wrote, ctx).toEqual([])
        }
        expect(rs.confineAfterDispose).toContain('after dispose')
      })

      it('control: a plain shell writing through the swapped-in symlink lands outside', () => {
        expect(ro.controls.swapLandsInTarget).toBe(true)
        expect(ro.firstRun.stdout, JSON.stringify(ro.firstRun)).toContain('WROTE')
      })
      it('a workspace root replaced by a symlink between two runs of a session is ROOT_CHANGED, and nothing lands outside', () => {
        expect(ro.afterSwap.verdict, JSON.stringify(ro.afterSwap)).toBe('RootChangedError ROOT_CHANGED')
        expect(ro.leakedToTarget).toEqual([])
      })
      it('control: a run granted the outer root can replace the inner root by a symlink', () => {
        expect(ro.controls.nestedSwapPossible).toBe(true)
      })
      it('a workspace root inside another writable root is refused', () => {
        expect(ro.nested.verdict, JSON.stringify(ro.nested)).toBe('InvalidRequestError INVALID_REQUEST')
        expect(ro.nested.message).toMatch(/lies inside the writable root/)
      })
      it('control: a plain shell follows a symlink inside a writable root out of it', () => {
        expect(ro.controls.symlinkLandsInTarget).toBe(true)
      })
      it('a root reached through a symlink that lies inside a writable root is refused', () => {
        expect(ro.throughSymlink.verdict, JSON.stringify(ro.throughSymlink)).toBe('InvalidRequestError INVALID_REQUEST')
        expect(ro.throughSymlink.message).toMatch(/symlink/)
      })
      it('control: an ordinary root is accepted and written', () => {
        expect(ro.normal.verdict, JSON.stringify(ro.normal)).toBe('accepted')
        expect(ro.normal.stdout).toContain('WROTE')
      })
      for (const root of REFUSED_ROOTS) {
        it(`${root} is refused as the workspace root and as a writable root, saying why (INVALID_REQUEST, never SANDBOX_UNAVAILABLE)`, () => {
          for (const a of [ro.refused[root]!, ro.refusedAsExtra[root]!]) {
            expect(a.verdict, JSON.stringify(a)).toBe('InvalidRequestError INVALID_REQUEST')
            expect(a.message, JSON.stringify(a)).toMatch(
              /system directory|filesystem|host temp dir|home directory|never a writable root/,
            )
          }
        })
      }
      if (user === 'root') {
        for (const type of ['proc', 'sysfs', 'devpts', 'cgroup2']) {
          it(`a ${type} filesystem mounted elsewhere is refused as a root`, () => {
            const a = ro.mountedElsewhere[type]
            expect(a, `${type} could not be mounted in the private mount namespace`).toBeDefined()
            expect(a!.verdict, JSON.stringify(a)).toBe('InvalidRequestError INVALID_REQUEST')
            expect(a!.message).toContain(type)
          })
        }
      }
      // uid 65534 cannot mount a pseudo-filesystem of its own in the host namespaces: its runs
      // check the host's own mounts of them (/proc, /sys, /dev/pts, a cgroup) in REFUSED_ROOTS above.
    })
  }
}
