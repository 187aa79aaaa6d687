// Lifetime (issue 10, class 6), per backend, mode and user: writers that leave the command's
// process group (setsid, a double fork, nohup … & disown) are dead when run() resolves, after an
// abort, terminate() and the runtime's dispose(); a background job that `kill -KILL $PPID`s its
// supervisor fails to, and leaves nothing behind after kill() or dispose(); and when the host
// process itself is SIGKILLed nothing it ran survives. Controls: the same scripts through Node's
// own spawn, where the writers survive (and a plain parent shell standing in for the supervisor
// is killed).
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { backendStatus, gateFor, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { eventually } from '../../support/subprocess/processes.js'
import { type AttackMode, type AttackUser, BOTH } from '../attacks/attack.js'
import { NOBODY, runScenario, startScenario, USERS } from '../host/run-as.js'
import { findProcesses, type LifetimeCase, type LifetimeOutcome } from './lifetime-scenario.js'
import { scratchDirAs } from '../../support/scratch.js'

/** A base dir owned by `user` with an empty workspace root in it. */
function rootFor(user: AttackUser, label: string): { base: string; root: string } {
  const base = scratchDirAs(user, `cordon-lifetime-${label}`)
  const root = path.join(base, 'root')
  fs.mkdirSync(root)
  if (user === 'nobody') fs.chownSync(root, NOBODY, NOBODY)
  return { base, root }
}

const gates = new Map<SandboxBackendName, ReturnType<typeof gateFor>>()
const reasons = new Map<SandboxBackendName, string>()
for (const backend of TEST_BACKENDS) {
  const status = await backendStatus(backend)
  gates.set(backend, gateFor(status))
  reasons.set(backend, status.reason)
}

/** The cases of one user: the control, and every usable backend under both modes. */
function casesFor(user: AttackUser, label: string): Array<LifetimeCase & { key: string }> {
  const make = (backend: SandboxBackendName | 'control', mode: AttackMode) => ({
    key: `${backend}/${mode}`,
    backend,
    mode,
    root: rootFor(user, `${label}-${backend}-${mode}`).root,
  })
  return [
    make('control', 'workspace-write'),
    ...TEST_BACKENDS.filter((b) => gates.get(b) === 'run').flatMap((b) => BOTH.map((m) => make(b, m))),
  ]
}

/** Every way of ending a run, every case of `user` side by side in one host. */
async function lifetime(user: AttackUser): Promise<Map<string, Record<string, LifetimeOutcome>>> {
  const cases = casesFor(user, 'run')
  const results = await runScenario<Record<string, LifetimeOutcome>[]>(user, 'lifetime', path.dirname(cases[0]!.root), {
    cases,
  })
  return new Map(cases.map((c, i) => [c.key, results[i]!]))
}

/** One host starts every case's writers; SIGKILLed once they run. What is alive 5 s later (control: 1.5 s). */
async function killHost(user: AttackUser): Promise<Map<string, { started: string[]; survivors: string[] }>> {
  const cases = casesFor(user, 'host')
  const base = path.dirname(cases[0]!.root)
  const ready = path.join(base, 'ready.json')
  const host = startScenario(user, 'host-to-kill', base, { cases, ready })
  let stderr = ''
  host.stderr?.setEncoding('utf8').on('data', (t: string) => {
    stderr += t
  })
  const up = await eventually(() => fs.existsSync(ready) && fs.statSync(ready).size > 0, 120_000)
  if (!up) {
    host.kill('SIGKILL')
    throw new Error(`the host never got its writers running: ${stderr}`)
  }
  const report = JSON.parse(fs.readFileSync(ready, 'utf8')) as Array<{
    markers: Record<string, string>
    started: string[]
    tempDir?: string
  }>
  host.kill('SIGKILL')
  const survivors = (markers: Record<string, string>) =>
    Object.keys(markers).filter((n) => findProcesses(markers[n]!).length > 0)
  const confined = report.filter((_, i) => cases[i]!.backend !== 'control')
  await eventually(() => confined.every((r) => survivors(r.markers).length === 0), 5000)
  await new Promise((r) => setTimeout(r, 300))
  const out = new Map(
    cases.map((c, i) => [c.key, { started: report[i]!.started, survivors: survivors(report[i]!.markers) }]),
  )
  for (const r of report) {
    for (const marker of Object.values(r.markers)) for (const pid of findProcesses(marker)) process.kill(pid, 'SIGKILL')
    if (r.tempDir) fs.rmSync(r.tempDir, { recursive: true, force: true })
  }
  return out
}

// one lifetime host per user, started now, side by side
const runs = new Map(USERS.map((user) => [user, lifetime(user)]))
// The host to kill starts once the user's lifetime host is done: side by side, four hosts that
// scan /proc starved each other on a 2-core CI (writers seen late, output read late).
const kills = new Map(
  USERS.map((user) => [
    user,
    runs.get(user)!.then(
      () => killHost(user),
      () => killHost(user),
    ),
  ]),
)
for (const p of [...runs.values(), ...kills.values()]) p.catch(() => undefined)

const WAYS_TO_END = ['run() resolved', 'run() aborted', 'terminate()', 'background kill()', 'runtime dispose()']

for (const user of USERS) {
  describe(`lifetime controls as ${user}: unconfined, the writers outlive the command`, () => {
    let outcomes: Record<string, LifetimeOutcome>
    beforeAll(async () => {
      outcomes = (await runs.get(user)!).get('control/workspace-write')!
    }, 300_000)
    it('after the command exits, its setsid, double-forked and nohup writers live and write on', () => {
      const o = outcomes['run() resolved']!
      expect(o.started, JSON.stringify(o)).toEqual(['setsid', 'dfork', 'nohup', 'leader'])
      expect(o.aliveAtEnd, JSON.stringify(o)).toEqual(['setsid', 'dfork', 'nohup'])
      expect(o.growing, JSON.stringify(o)).toEqual(['setsid', 'dfork', 'nohup'])
    })
    it('a job kills the plain parent standing in for its supervisor, and its setsid writer lives on', () => {
      const o = outcomes['background kill()']!
      expect(o.output, JSON.stringify(o)).toMatch(/kill=0\nparent-lost/)
      expect(o.supervisor?.alive, JSON.stringify(o)).toBe(false)
      expect(o.aliveAtEnd, JSON.stringify(o)).toContain('bg')
      expect(o.growing, JSON.stringify(o)).toContain('bg')
    })
    it('a SIGKILLed host leaves the writers it started running', async () => {
      const k = (await kills.get(user)!).get('control/workspace-write')!
      expect(k.started).toEqual(['setsid', 'dfork', 'nohup', 'leader'])
      expect(k.survivors).toEqual(['setsid', 'dfork', 'nohup', 'leader'])
    }, 300_000)
  })
}

for (const backend of TEST_BACKENDS) {
  const gate = gates.get(backend)!
  for (const user of USERS) {
    for (const mode of BOTH) {
      const title = `lifetime as ${user} [${backend}, ${mode}]`
      if (gate === 'fail') {
        describe(title, () => {
          it(`requires the ${backend} backend (CORDON_REQUIRE_BACKENDS)`, () => {
            throw new Error(`backend ${backend} is required but unusable: ${reasons.get(backend)}`)
          })
        })
        continue
      }
      describe.skipIf(gate === 'skip')(gate === 'skip' ? `${title} (skipped: ${reasons.get(backend)})` : title, () => {
        let outcomes: Record<string, LifetimeOutcome>
        beforeAll(async () => {
          outcomes = (await runs.get(user)!).get(`${backend}/${mode}`)!
        }, 300_000)
        for (const way of WAYS_TO_END) {
          it(`${way}: everything the command started is dead at once and writes no more`, () => {
            const o = outcomes[way]
            expect(o, `${way} did not run`).toBeDefined()
            const ctx = JSON.stringify(o)
            expect(o!.error, ctx).toBeUndefined()
            const expected = way.startsWith('background')
              ? ['bg', 'job']
              : way === 'runtime dispose()'
                ? ['setsid', 'dfork', 'nohup', 'leader', 'bg', 'job']
                : ['setsid', 'dfork', 'nohup', 'leader']
            expect(o!.started, `${ctx}\nevery writer started`).toEqual(expected)
            expect(o!.aliveAtEnd, ctx).toEqual([])
            expect(o!.growing, ctx).toEqual([])
            if (way.startsWith('background') || way === 'runtime dispose()') {
              expect(o!.output, `${ctx}\nthe job could not kill its supervisor`).toContain('parent-kept')
              if (o!.supervisor) expect(o!.supervisor.alive, ctx).toBe(true)
            }
          })
        }
        it('a SIGKILLed host takes everything it ran with it', async () => {
          const k = (await kills.get(user)!).get(`${backend}/${mode}`)!
          expect(k.started).toEqual(['setsid', 'dfork', 'nohup', 'leader'])
          expect(k.survivors).toEqual([])
        }, 300_000)
      })
    }
  }
}
