// Escape attacks against every backend, under read-only and workspace-write, as root and as an
// unprivileged user (each a runner process, started side by side), and every attack's CONTROL:
// the same script run unconfined by the same user, which must succeed (or, where this host makes
// the operation impossible even unconfined, must fail for the reason the attack names).
// A confined attack asserts that nothing outside the grant changed (files, host IPC objects,
// keyrings, terminals, host processes), nothing reached the host's listeners, the host's helper
// survived, and the attack itself saw no success (no BREACH line).
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { BackendCapability, SandboxBackendName } from '../../../src/sandbox/probe.js'
import { backendStatus, gateFor, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import type { Attack, AttackMode, AttackUser } from './attack.js'
import { ATTACKS } from './catalogue.js'
import { type AttackOutcome, breached } from './harness.js'
import { NOBODY, REPO, runScriptAs, USERS } from '../host/run-as.js'
import { scratchDirAs } from '../../support/scratch.js'

interface RunnerReport {
  uid: number
  capability?: BackendCapability
  outcomes: AttackOutcome[]
}

const RUNNER = path.join(REPO, 'test/fixtures/escape-runner.ts')

/** Starts the runner for `which` (a backend, or `control`) as `user`; its report once it is done. */
async function runRunner(which: SandboxBackendName | 'control', user: AttackUser): Promise<RunnerReport> {
  const base = scratchDirAs(user, `cordon-escape-${which}`)
  const r = await runScriptAs(user, RUNNER, [which, base])
  if (r.code !== 0) throw new Error(`escape runner ${which} as ${user} exited ${r.code ?? r.signal}: ${r.stderr}`)
  return JSON.parse(r.stdout) as RunnerReport
}

function context(o: AttackOutcome): string {
  return `${o.name} [${o.mode}] uid ${o.uid}\nstdout: ${o.stdout}\nstderr: ${o.stderr}\nchanged: ${o.changed.join('\n  ')}${o.error ? `\nerror: ${o.error}` : ''}`
}

function expectContained(
  outcome: AttackOutcome | undefined,
  attack: Attack,
  backend: SandboxBackendName,
  user: AttackUser,
  limitations: readonly string[],
): void {
  expect(outcome, 'attack did not run').toBeDefined()
  if (!outcome) return
  const ctx = context(outcome)
  expect(outcome.error, ctx).toBeUndefined()
  const hows = Object.values(outcome.account ?? {}).map((v) => v.how)
  const privateNs = attack.privateNamespace?.[backend]
  const admitted = attack.ungovernedFor?.[user]
  const applies = (admitted?.backend ?? backend) === backend && (admitted?.mode ?? outcome.mode) === outcome.mode
  const ungoverned = applies ? admitted : undefined
  if (ungoverned !== undefined) {
    // the account must own up: the class is not governed for this user, and says why
    const verdict = outcome.account?.[ungoverned.class]
    expect(verdict?.governed, `${ctx}\n${ungoverned.class} is reported not governed`).toBe(false)
    expect(verdict?.how, ctx).toContain(ungoverned.how)
  } else if (privateNs !== undefined && [...limitations, ...hows].some((l) => l.includes(privateNs))) {
    // the call succeeds inside the run's own namespace: only what reached the host counts
  } else {
    expect(outcome.stdout, ctx).not.toContain('BREACH')
  }
  // An admitted (ungoverned) class may reach the host: that is what the account says.
  if (ungoverned === undefined) {
    expect(outcome.changed, ctx).toEqual([])
    expect(outcome.received, ctx).toBe(0)
  }
  expect(outcome.helperAlive, ctx).toBe(true)
}

function find(outcomes: readonly AttackOutcome[], name: string, mode: AttackMode | 'control') {
  return outcomes.find((o) => o.name === name && o.mode === mode)
}

const titleOf = (attack: Attack, mode: AttackMode | 'control') =>
  `${attack.name} [${mode}${attack.network ? ', network deny' : ''}${attack.limits ? `, limits ${JSON.stringify(attack.limits)}` : ''}]`

// Start every runner now, side by side; each describe block awaits its own.
const started = new Map<string, Promise<RunnerReport>>()
const gates = new Map<SandboxBackendName, { gate: 'run' | 'skip' | 'fail'; reason: string }>()
for (const backend of TEST_BACKENDS) {
  const status = await backendStatus(backend)
  gates.set(backend, { gate: gateFor(status), reason: status.reason })
}
for (const user of USERS) {
  started.set(`control/${user}`, runRunner('control', user))
  for (const backend of TEST_BACKENDS)
    if (gates.get(backend)?.gate === 'run') started.set(`${backend}/${user}`, runRunner(backend, user))
}
// a runner that fails is reported by the tests that await it, not as an unhandled rejection
for (const p of started.values()) p.catch(() => undefined)

it(`runs at least 40 attacks of every class`, () => {
  expect(new Set(ATTACKS.map((a) => a.name)).size).toBe(ATTACKS.length)
  expect(ATTACKS.length).toBeGreaterThanOrEqual(40)
  for (const kind of ['processes', 'ipc', 'keyrings', 'terminals', 'inode ioctls', 'leases', 'resources'])
    expect(
      ATTACKS.some((a) => a.kind === kind),
      kind,
    ).toBe(true)
})

for (const user of USERS) {
  describe(`controls: every attack unconfined as ${user}`, () => {
    let report: RunnerReport
    beforeAll(async () => {
      report = await started.get(`control/${user}`)!
    }, 600_000)
    it(`the control runner ran as uid ${user === 'root' ? 0 : NOBODY}, once per attack`, () => {
      expect(report.uid).toBe(user === 'root' ? 0 : NOBODY)
      expect(report.outcomes.length).toBe(ATTACKS.length)
    })
    for (const attack of ATTACKS) {
      const impossible = attack.control?.impossible?.[user]
      const title = impossible
        ? `control: ${titleOf(attack, 'control')} fails unconfined too (${impossible})`
        : `control: ${titleOf(attack, 'control')} succeeds unconfined`
      it(title, () => {
        const o = find(report.outcomes, attack.name, 'control')
        expect(o, 'control did not run').toBeDefined()
        if (!o) return
        expect(o.error, context(o)).toBeUndefined()
        expect(breached(o), context(o)).toBe(impossible === undefined)
      })
    }
  })
}

for (const backend of TEST_BACKENDS) {
  const { gate, reason } = gates.get(backend)!
  for (const user of USERS) {
    const title = `escape attacks as ${user} [${backend}]`
    if (gate === 'fail') {
      describe(title, () => {
        it(`requires the ${backend} backend (CORDON_REQUIRE_BACKENDS)`, () => {
          throw new Error(`backend ${backend} is required by CORDON_REQUIRE_BACKENDS but unusable: ${reason}`)
        })
      })
      continue
    }
    describe.skipIf(gate === 'skip')(gate === 'skip' ? `${title} (skipped: ${reason})` : title, () => {
      let report: RunnerReport
      beforeAll(async () => {
        report = await started.get(`${backend}/${user}`)!
      }, 600_000)
      it(`the backend is usable as ${user} and every attack ran under each of its modes`, () => {
        expect(report.uid).toBe(user === 'root' ? 0 : NOBODY)
        expect(report.capability?.usable, report.capability?.reason).toBe(true)
        expect(report.outcomes.length).toBe(ATTACKS.reduce((n, a) => n + a.modes.length, 0))
      })
      for (const attack of ATTACKS) {
        for (const mode of attack.modes) {
          it(`${titleOf(attack, mode)} as ${user}`, () => {
            expectContained(
              find(report.outcomes, attack.name, mode),
              attack,
              backend,
              user,
              report.capability?.limitations ?? [],
            )
          })
        }
      }
    })
  }
}
