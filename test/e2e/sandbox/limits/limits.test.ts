// Each limit by the attack it stops (issue 27), on both backends (bubblewrap in its resident instance
// and in a bwrap of the run's own), with a host running as root and as uid 65534: confined, the
// attack is refused, or the run's account says the class is not governed for that host; its
// unconfined control, run in a cgroup this test made (a generous but finite bound), shows the attack
// works. While each confined attack runs, the host's own 10 ms timer must keep firing on time.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../../src/sandbox/probe.js'
import { cgroupHierarchies } from '../../../../src/subprocess/cgroup/hierarchy.js'
import type { AttackUser } from '../../../escape/attacks/attack.js'
import { NOBODY, runScriptAs, USERS } from '../../../escape/host/run-as.js'
import { backendStatus, gateFor } from '../../../support/sandbox/backends.js'
import { LIMIT_ATTACKS, type LimitAttack } from './attacks.js'
import type { LimitOutcome } from './limits-host.js'
import { scratchDirAs } from '../../../support/scratch.js'

const HOST = path.join(import.meta.dirname, 'limits-host.ts')
const KINDS: ReadonlyArray<{ backend: SandboxBackendName; kind: 'launched' | 'resident' | 'wrapped' }> = [
  { backend: 'landlock', kind: 'launched' },
  { backend: 'bubblewrap', kind: 'resident' },
  { backend: 'bubblewrap', kind: 'wrapped' },
]
/** The worst a host timer may fire late while a confined command hits its limit. */
const RESPONSIVE_MS = 100

const dirs = cgroupHierarchies().dirs
const rootCgroups = dirs.pids !== undefined && dirs.memory !== undefined && dirs.cpu !== undefined

/** Runs every attack confined as `user` on one backend and kind; the outcomes by name. */
async function confinedAs(user: AttackUser, backend: SandboxBackendName, kind: string) {
  const base = scratchDirAs(user, 'cordon-limits')
  const root = path.join(base, 'ws')
  fs.mkdirSync(root)
  if (user === 'nobody') fs.chownSync(root, NOBODY, NOBODY)
  const resultFile = path.join(base, 'result.json')
  const args = { backend, kind, root, names: LIMIT_ATTACKS.map((a) => a.name) }
  const r = await runScriptAs(user, HOST, [resultFile, JSON.stringify(args)], { timeoutMs: 240_000 })
  let parsed: { uid: number; result?: LimitOutcome[]; error?: string }
  try {
    parsed = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as typeof parsed
  } catch {
    throw new Error(`limits-host as ${user} left no result (exit ${r.code ?? r.signal}): ${r.stderr}`)
  }
  if (parsed.error !== undefined) throw new Error(`limits-host as ${user}: ${parsed.error}`)
  expect(parsed.uid).toBe(user === 'root' ? 0 : NOBODY)
  return new Map((parsed.result ?? []).map((o) => [o.name, o]))
}

/** A cgroup of this test's per bound controller, limited to `bounds`; removed by `remove`. */
function controlCgroup(bounds: LimitAttack['control'], tag: string): { procs: string[]; remove(): void } {
  const made: string[] = []
  for (const [c, file, value] of [
    ['pids', 'pids.max', bounds.pids],
    ['memory', 'memory.limit_in_bytes', bounds.memoryBytes],
    ['cpu', undefined, undefined],
  ] as const) {
    const dir = path.join(dirs[c] as string, `cordon-test-${process.pid}-${tag}`)
    fs.mkdirSync(dir)
    made.push(dir)
    if (file !== undefined) fs.writeFileSync(path.join(dir, file), String(value))
  }
  return {
    procs: made.map((d) => path.join(d, 'cgroup.procs')),
    remove: () => {
      for (const d of made) fs.rmdirSync(d)
    },
  }
}

/** Runs `attack` unconfined as `user`, inside a cgroup this test made; its stdout. */
async function control(attack: LimitAttack, user: AttackUser, tag: string): Promise<string> {
  const base = scratchDirAs(user, 'cordon-limits-control')
  const cg = controlCgroup(attack.control, tag)
  const drop = user === 'nobody' ? `setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups -- ` : ''
  const join = cg.procs.map((p) => `echo $$ > '${p}'`).join(' && ')
  const child = spawn('/bin/sh', ['-c', `${join} && exec ${drop}/bin/bash -c "$0"`, attack.script], {
    cwd: base,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: base, CONTROL: '1', HOME: base },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
    killSignal: 'SIGKILL',
  })
  const out: Buffer[] = []
  child.stdout.on('data', (c: Buffer) => out.push(c))
  await new Promise((resolve) => child.on('close', resolve))
  // The tree's last members leave the cgroup once reaped.
  await new Promise((r) => setTimeout(r, 100))
  cg.remove()
  return Buffer.concat(out).toString('utf8')
}

describe.skipIf(!rootCgroups)('unconfined controls (in a bounded cgroup of the test)', () => {
  for (const user of USERS)
    for (const attack of LIMIT_ATTACKS.filter((a) => a.stressOnly !== true && (a.controlUsers ?? USERS).includes(user)))
      it(`${attack.name}: works unconfined as ${user}`, async () => {
        const stdout = await control(attack, user, `${user}-${LIMIT_ATTACKS.indexOf(attack)}`)
        expect(stdout).toContain('BREACH')
      }, 90_000)
})

for (const { backend, kind } of KINDS) {
  const status = await backendStatus(backend)
  const gate = gateFor(status)
  describe(`limits under ${backend} (${kind})`, () => {
    if (gate !== 'run') {
      it(`needs ${backend}`, ({ skip }) => {
        if (gate === 'fail') throw new Error(`${backend} is required but unusable: ${status.reason}`)
        skip(`${backend} is unusable here: ${status.reason}`)
      })
      return
    }
    for (const user of USERS) {
      let outcomes: Map<string, LimitOutcome>
      beforeAll(async () => {
        outcomes = await confinedAs(user, backend, kind)
      }, 300_000)
      // A root host bounds its runs with cgroups; a non-root one cannot (cgroup v1 is root's).
      const cgroups = user === 'root' && rootCgroups
      for (const attack of LIMIT_ATTACKS)
        it(`${attack.name}, as ${user}`, () => {
          const o = outcomes.get(attack.name)
          expect(o, 'the attack ran').toBeDefined()
          const ctx = JSON.stringify(o, null, 1)
          const ungoverned = attack.needs !== undefined && !cgroups
          const verdict = o?.account[attack.klass]
          if (ungoverned) {
            // No limit to hit: the account owns up, and an unbounded hog may slow the host.
            expect(verdict?.governed, ctx).toBe(false)
            expect(verdict?.how, ctx).toMatch(/^not governed/)
            return
          }
          expect(o?.lateMs, `the host's timer stayed on time\n${ctx}`).toBeLessThan(RESPONSIVE_MS)
          if (Object.keys(attack.limits).length > 0 && attack.stressOnly !== true)
            expect(verdict?.governed, ctx).toBe(true)
          expect(o?.stdout, ctx).not.toContain('BREACH')
          checkHow(attack, o as LimitOutcome, cgroups)
        })
    }
  })
}

/** What each refusal looks like, beyond no BREACH. */
function checkHow(attack: LimitAttack, o: LimitOutcome, cgroups: boolean): void {
  const ctx = JSON.stringify(o, null, 1)
  if (attack.limits.processes === 100) expect(Number(/forked (\d+)/.exec(o.stdout)?.[1]), ctx).toBeLessThan(100)
  if (attack.limits.memoryBytes !== undefined) expect(o.signal, ctx).toBe('SIGKILL') // the memory cgroup's OOM kill
  if (attack.limits.cpuSeconds !== undefined) {
    // SIGXCPU comes only from RLIMIT_CPU, and the script would have printed BREACH at 3 s of CPU:
    // no wall-clock bound, since the run's low CPU weight stretches 1 s of CPU on a busy host.
    expect(o.signal, ctx).toBe('SIGXCPU')
  }
  if (attack.name.includes('oom_score_adj')) {
    expect(o.stdout, ctx).toContain('adj 500')
    expect(o.stdout, ctx).toContain('now 500')
  }
  if (attack.stressOnly === true) expect(o.stdout, ctx).toContain('survived')
  if (cgroups && attack.limits.processes !== undefined) expect(o.account.resources?.how, ctx).toContain('pids cgroup')
}
