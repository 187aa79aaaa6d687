// The red team's breaks of hidden paths, protected paths, run-as-owner and the failure log
// (test/escape/hidden/scenarios.ts), on both backends, as root and as uid 65534, each with its
// CONTROL: the same attack run unconfined by the same user, which must show the effect. Under
// cordon the effect must not be seen — unless the plan was refused, or the run's account says the
// class is not governed (a `partial` run that owns up to it, as Landlock does for protected paths
// inside a writable root). A confined effect under an account that claims the class is a break.
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { backendStatus, gateFor, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import type { AttackUser } from '../attacks/attack.js'
import { ownerWithHome, type RedteamMode, type RedteamOutcome } from './scenarios.js'
import { NOBODY, REPO, runScriptAs, USERS } from '../host/run-as.js'
import { scratchDirAs } from '../../support/scratch.js'

const RUNNER = path.join(REPO, 'test/escape/hidden/scenario-runner.ts')

/** Every scenario the runner reports, with its modes. */
const SCENARIOS: ReadonlyArray<{ name: string; modes: readonly RedteamMode[]; rootOnly?: true }> = [
  { name: 'git-commondir', modes: ['workspace-write'] },
  { name: 'git-hookspath-in-worktree', modes: ['workspace-write'] },
  { name: 'git-worktree-dotgit-file', modes: ['workspace-write'] },
  { name: 'git-nested-checkout', modes: ['workspace-write'] },
  { name: 'cordon-package-dependency', modes: ['workspace-write'] },
  { name: 'hidden-file-replaced-during-run', modes: ['read-only', 'workspace-write'] },
  { name: 'hidden-dir-created-during-run', modes: ['read-only', 'workspace-write'] },
  { name: 'hidden-in-workspace-parent-renamed', modes: ['workspace-write'] },
  { name: 'failure-log-made-a-directory', modes: ['read-only', 'workspace-write'] },
]
const OWNER_HOME = 'run-as-owner-home-as-workspace'

interface Report {
  uid: number
  outcomes: RedteamOutcome[]
}

async function runRunner(backend: SandboxBackendName, user: AttackUser, which: 'all' | 'owner-home'): Promise<Report> {
  const base = scratchDirAs(user, `cordon-redteam-${backend}-${which}`)
  // owner-home binds a scratch dir over the owner's home: only inside a mount namespace of its own
  const prefix = which === 'owner-home' ? ['unshare', '--mount', '--propagation', 'private', '--'] : []
  const r = await runScriptAs(user, RUNNER, [backend, base, which], { prefix, timeoutMs: 540_000 })
  if (r.code !== 0)
    throw new Error(`redteam runner ${backend}/${which} as ${user} exited ${r.code ?? r.signal}: ${r.stderr}`)
  return JSON.parse(r.stdout) as Report
}

function context(o: RedteamOutcome): string {
  return `${o.scenario} [${o.backend}, ${o.mode}] uid ${o.uid}: enforcement ${o.enforcement}, ${o.claimClass} ${JSON.stringify(o.verdict)}${o.refused ? `, refused: ${o.refused}` : ''}\n${o.detail}`
}

/** The confined run held: refused, or an account that admits the class, or no effect. */
function expectHeld(o: RedteamOutcome | undefined): void {
  expect(o, 'scenario did not run').toBeDefined()
  if (!o) return
  const ctx = context(o)
  if (o.refused !== undefined) return // the plan was refused with a typed error: nothing ran
  if (o.verdict?.governed === false) {
    expect(o.enforcement, ctx).toBe('partial')
    return
  }
  expect(o.confinedEffect, `BREAK: the attack's effect under cordon, with the account claiming it\n${ctx}`).toBe(false)
}

function expectControl(o: RedteamOutcome | undefined): void {
  expect(o, 'scenario did not run').toBeDefined()
  if (o) expect(o.controlEffect, `control did not show the effect\n${context(o)}`).toBe(true)
}

const find = (r: Report, name: string, mode: RedteamMode) =>
  r.outcomes.find((o) => o.scenario === name && o.mode === mode)

const gates = new Map<SandboxBackendName, { gate: 'run' | 'skip' | 'fail'; reason: string }>()
for (const backend of TEST_BACKENDS) {
  const status = await backendStatus(backend)
  gates.set(backend, { gate: gateFor(status), reason: status.reason })
}
const owner = ownerWithHome()
const started = new Map<string, Promise<Report>>()
for (const backend of TEST_BACKENDS) {
  if (gates.get(backend)?.gate !== 'run') continue
  for (const user of USERS) started.set(`${backend}/${user}`, runRunner(backend, user, 'all'))
  if (owner) started.set(`${backend}/owner-home`, runRunner(backend, 'root', 'owner-home'))
}
for (const p of started.values()) p.catch(() => undefined)

for (const backend of TEST_BACKENDS) {
  const { gate, reason } = gates.get(backend)!
  if (gate === 'fail') {
    describe(`red team [${backend}]`, () => {
      it(`requires the ${backend} backend (CORDON_REQUIRE_BACKENDS)`, () => {
        throw new Error(`backend ${backend} is required by CORDON_REQUIRE_BACKENDS but unusable: ${reason}`)
      })
    })
    continue
  }
  for (const user of USERS) {
    const title = `red team as ${user} [${backend}]`
    describe.skipIf(gate === 'skip')(gate === 'skip' ? `${title} (skipped: ${reason})` : title, () => {
      let report: Report
      beforeAll(async () => {
        report = await started.get(`${backend}/${user}`)!
      }, 600_000)
      it(`ran as uid ${user === 'root' ? 0 : NOBODY}, every scenario under each of its modes`, () => {
        expect(report.uid).toBe(user === 'root' ? 0 : NOBODY)
        expect(report.outcomes.length).toBe(SCENARIOS.reduce((n, s) => n + s.modes.length, 0))
      })
      for (const s of SCENARIOS) {
        for (const mode of s.modes) {
          it(`control: ${s.name} [${mode}] works unconfined as ${user}`, () =>
            expectControl(find(report, s.name, mode)))
          it(`${s.name} [${mode}] is refused under ${backend} as ${user}, or the account says so`, () =>
            expectHeld(find(report, s.name, mode)))
        }
      }
    })
  }
  const ownerTitle = `red team: root host, workspace = the owner's home [${backend}]`
  const skipOwner = gate === 'skip' || owner === undefined
  const why = gate === 'skip' ? reason : 'no passwd user other than root has an existing home of their own here'
  describe.skipIf(skipOwner)(skipOwner ? `${ownerTitle} (skipped: ${why})` : ownerTitle, () => {
    let report: Report
    beforeAll(async () => {
      report = await started.get(`${backend}/owner-home`)!
    }, 600_000)
    it(`control: the owner writes their own ~/.bashrc`, () =>
      expectControl(find(report, OWNER_HOME, 'workspace-write')))
    it(`a command run as the owner cannot write the owner's ~/.bashrc (the home is refused as a root)`, () =>
      expectHeld(find(report, OWNER_HOME, 'workspace-write')))
  })
}
