// Escape attacks against every backend, under read-only and workspace-write, as root (in this
// process) and as an unprivileged user (a runner started through setpriv). Each asserts that
// nothing outside the grant changed, nothing reached the host's listeners, the host's helper
// survived, and the attack itself saw no success (no BREACH line).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { BackendCapability, SandboxBackendName } from '../../src/sandbox/probe.js'
import { describeWithBackend, TEST_BACKENDS } from '../support/backends.js'
import { ATTACKS } from './attacks.js'
import { runAttacks, type AttackOutcome } from './harness.js'

const NOBODY = 65534
const repo = path.resolve(import.meta.dirname, '..', '..')

function expectContained(
  outcome: AttackOutcome | undefined,
  privateNamespace: string | undefined,
  limitations: () => readonly string[],
): void {
  expect(outcome, 'attack did not run').toBeDefined()
  if (!outcome) return
  const context = `${outcome.name} [${outcome.mode}] uid ${outcome.uid}\nstdout: ${outcome.stdout}\nstderr: ${outcome.stderr}`
  if (privateNamespace === undefined) expect(outcome.stdout, context).not.toContain('BREACH')
  else
    expect(
      limitations().some((l) => l.includes(privateNamespace)),
      `limitation "${privateNamespace}" is listed`,
    ).toBe(true)
  expect(outcome.changed, context).toEqual([])
  expect(outcome.received, context).toBe(0)
  expect(outcome.helperAlive, context).toBe(true)
}

function registerAttackTests(
  get: () => AttackOutcome[],
  who: string,
  backend: SandboxBackendName,
  limitations: () => readonly string[],
): void {
  it(`runs at least 40 attacks as ${who}`, () => {
    expect(new Set(ATTACKS.map((a) => a.name)).size).toBeGreaterThanOrEqual(40)
    expect(get().length).toBe(ATTACKS.reduce((n, a) => n + a.modes.length, 0))
  })
  for (const attack of ATTACKS) {
    for (const mode of attack.modes) {
      const exempt = attack.privateNamespace?.[backend] === undefined ? '' : ' (private namespace: host effects only)'
      it(`${attack.name} [${mode}${attack.network ? ', network deny' : ''}]${exempt} as ${who}`, () => {
        expectContained(
          get().find((o) => o.name === attack.name && o.mode === mode),
          attack.privateNamespace?.[backend],
          limitations,
        )
      })
    }
  }
}

for (const backend of TEST_BACKENDS) {
  await describeWithBackend(backend, 'escape attacks as root', (sandbox) => {
    let base = ''
    let outcomes: AttackOutcome[] = []
    beforeAll(async () => {
      base = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-escape-root-'))
      outcomes = await runAttacks(sandbox(), ATTACKS, base)
    }, 300_000)
    afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
    registerAttackTests(
      () => outcomes,
      'root',
      backend,
      () => sandbox().capabilities.backends[backend]?.limitations ?? [],
    )
  })

  await describeWithBackend(backend, 'escape attacks as an unprivileged user', () => {
    let base = ''
    let outcomes: AttackOutcome[] = []
    let capability: BackendCapability | undefined
    beforeAll(() => {
      base = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-escape-nobody-'))
      fs.chownSync(base, NOBODY, NOBODY)
      const stdout = execFileSync(
        'setpriv',
        [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          '--',
          process.execPath,
          '--import',
          path.join(repo, 'test/fixtures/ts-hooks.mjs'),
          path.join(repo, 'test/fixtures/escape-runner.ts'),
          backend,
          base,
        ],
        {
          cwd: '/',
          encoding: 'utf8',
          maxBuffer: 64 << 20,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/' },
        },
      )
      const parsed = JSON.parse(stdout) as { uid: number; capability?: BackendCapability; outcomes: AttackOutcome[] }
      expect(parsed.uid).toBe(NOBODY)
      capability = parsed.capability
      outcomes = parsed.outcomes
    }, 300_000)
    afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
    it('the backend is usable for an unprivileged host', () => {
      expect(capability?.usable, capability?.reason).toBe(true)
    })
    registerAttackTests(
      () => outcomes,
      'nobody',
      backend,
      () => capability?.limitations ?? [],
    )
  })
}
