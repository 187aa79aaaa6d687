// What a command inherits from its host as stdout `inherit`, per backend, mode and user (a host
// process per user, started with the stdout under attack):
// - a regular file opened before the sandbox (issue 10, class 10): fchmod, ftruncate, futimens
//   and a reopen through /proc/self/fd must not reach it (it is relayed through a pipe), or the
//   run must say `partial`;
// - a session-less pty (class 4, this host has dev.tty.legacy_tiocsti = 1): TIOCSTI, TIOCSCTTY
//   then TIOCSTI, and TIOCLINUX through it are refused, and nothing is queued as typed input.
// Controls: the same attacks through Node's own spawn with the same stdout succeed.
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { backendStatus, gateFor, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDirAs } from '../../support/scratch.js'
import { type AttackMode, type AttackUser, BOTH } from '../attacks/attack.js'
import { PYTHON } from '../host/host-objects.js'
import { NOBODY, runScenario, USERS } from '../host/run-as.js'
import { type InheritedCase, type InheritedOutcome, TERMINAL_ATTACKS } from './inherited-scenario.js'

/** Owns a raw session-less pty, runs argv[1:] with it as stdout, then prints what was queued as input. */
const PTY_OWNER = `
import json, os, pty, subprocess, sys, tty
master, slave = pty.openpty()
tty.setraw(slave)
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
os.set_blocking(slave, False)
queued = b''
try:
    queued = os.read(slave, 4096)
except BlockingIOError:
    pass
print(json.dumps({"queued": queued.decode(errors="replace"), "code": p.returncode, "stderr": p.stderr.decode(errors="replace")}))
`

const gates = new Map<SandboxBackendName, ReturnType<typeof gateFor>>()
const reasons = new Map<SandboxBackendName, string>()
for (const backend of TEST_BACKENDS) {
  const status = await backendStatus(backend)
  gates.set(backend, gateFor(status))
  reasons.set(backend, status.reason)
}

/** The cases of one user (every usable backend under both modes, then the control) in a base they own. */
function casesFor(user: AttackUser, label: string): { base: string; cases: Array<InheritedCase & { key: string }> } {
  const base = scratchDirAs(user, `cordon-inherited-${label}`)
  const root = path.join(base, 'root')
  fs.mkdirSync(root)
  if (user === 'nobody') fs.chownSync(root, NOBODY, NOBODY)
  const make = (backend: SandboxBackendName | 'control', mode: AttackMode) => ({
    key: `${backend}/${mode}`,
    backend,
    mode,
    root,
  })
  const confined = TEST_BACKENDS.filter((b) => gates.get(b) === 'run').flatMap((b) => BOTH.map((m) => make(b, m)))
  return { base, cases: [...confined, make('control', 'workspace-write')] }
}

async function inheritedFile(user: AttackUser): Promise<Map<string, InheritedOutcome>> {
  const { base, cases } = casesFor(user, 'file')
  const file = path.join(base, 'host-stdout.log')
  fs.writeFileSync(file, 'the host log: keep me\n', { mode: 0o644 })
  if (user === 'nobody') fs.chownSync(file, NOBODY, NOBODY)
  const fd = fs.openSync(file, 'r+')
  try {
    const results = await runScenario<InheritedOutcome[]>(
      user,
      'inherited-file',
      base,
      { cases, file },
      { stdoutFd: fd },
    )
    return new Map(cases.map((c, i) => [c.key, results[i]!]))
  } finally {
    fs.closeSync(fd)
  }
}

async function inheritedTerminal(
  user: AttackUser,
): Promise<{ byCase: Map<string, Record<string, InheritedOutcome>>; queued: string; tokens: Map<string, string[]> }> {
  const { base, cases } = casesFor(user, 'tty')
  let owner = ''
  const results = await runScenario<Record<string, InheritedOutcome>[]>(
    user,
    'inherited-terminal',
    base,
    { cases },
    { prefix: [PYTHON, '-c', PTY_OWNER], onStdout: (s) => (owner = s) },
  )
  const { queued } = JSON.parse(owner) as { queued: string }
  const names = Object.keys(TERMINAL_ATTACKS)
  const tokens = new Map(cases.map((c, i) => [c.key, names.map((_, j) => `<${i}.${j}>`)]))
  return { byCase: new Map(cases.map((c, i) => [c.key, results[i]!])), queued, tokens }
}

const files = new Map(USERS.map((u) => [u, inheritedFile(u)]))
const terminals = new Map(USERS.map((u) => [u, inheritedTerminal(u)]))
for (const p of [...files.values(), ...terminals.values()]) p.catch(() => undefined)

const STI_NEEDS_CTTY =
  'TIOCSTI into a terminal that is not the caller’s controlling terminal needs CAP_SYS_ADMIN: uid 65534 is refused unconfined too'

for (const user of USERS) {
  describe(`inherited stdout controls as ${user}: unconfined, the attacks reach the host's file and terminal`, () => {
    it('fchmod, ftruncate, futimens and a reopen through /proc/self/fd change the inherited file', async () => {
      const o = (await files.get(user)!).get('control/workspace-write')!
      const ctx = JSON.stringify(o)
      expect(o.report, ctx).toMatch(/BREACH fchmod[\s\S]*BREACH ftruncate[\s\S]*BREACH futimens[\s\S]*BREACH reopen/)
      expect(o.file!.after, ctx).not.toEqual(o.file!.before)
    }, 300_000)
    for (const [j, name] of Object.keys(TERMINAL_ATTACKS).entries()) {
      const impossible = user === 'nobody' && j === 0
      it(impossible ? `${name} fails unconfined too (${STI_NEEDS_CTTY})` : `${name} succeeds unconfined`, async () => {
        const { byCase, queued, tokens } = await terminals.get(user)!
        const o = byCase.get('control/workspace-write')![name]!
        const ctx = `${JSON.stringify(o)}\nqueued: ${JSON.stringify(queued)}`
        expect(o.error, ctx).toBeUndefined()
        if (impossible) expect(o.report, ctx).not.toContain('BREACH')
        else expect(o.report, ctx).toContain('BREACH')
        // TIOCLINUX types nothing; the injections are found in the terminal's input queue
        if (j < 2) expect(queued.includes(tokens.get('control/workspace-write')![j]!), ctx).toBe(!impossible)
      }, 300_000)
    }
  })
}

for (const backend of TEST_BACKENDS) {
  const gate = gates.get(backend)!
  for (const user of USERS) {
    for (const mode of BOTH) {
      const title = `inherited stdout as ${user} [${backend}, ${mode}]`
      if (gate === 'fail') {
        describe(title, () => {
          it(`requires the ${backend} backend (CORDON_REQUIRE_BACKENDS)`, () => {
            throw new Error(`backend ${backend} is required but unusable: ${reasons.get(backend)}`)
          })
        })
        continue
      }
      describe.skipIf(gate === 'skip')(gate === 'skip' ? `${title} (skipped: ${reasons.get(backend)})` : title, () => {
        let file: InheritedOutcome
        let terminal: Awaited<ReturnType<typeof inheritedTerminal>>
        beforeAll(async () => {
          file = (await files.get(user)!).get(`${backend}/${mode}`)!
          terminal = await terminals.get(user)!
        }, 300_000)
        it('a regular file inherited as stdout is relayed (unchanged by fchmod, ftruncate, futimens, reopen), or the run says partial because of it', () => {
          const ctx = JSON.stringify(file)
          expect(file.error, ctx).toBeUndefined()
          const reached =
            file.report.includes('BREACH') || JSON.stringify(file.file!.after) !== JSON.stringify(file.file!.before)
          if (reached) {
            // only an account that names the inherited descriptor as the reason excuses it
            expect(file.enforcement, ctx).toBe('partial')
            expect(
              file.ungoverned?.some((u) => /inherit|descriptor|stdout|stdio/.test(u)),
              ctx,
            ).toBe(true)
          } else {
            expect(file.report, ctx).toContain('relayed')
          }
        })
        for (const [j, name] of Object.keys(TERMINAL_ATTACKS).entries()) {
          it(`${name}: refused, nothing typed into the terminal`, () => {
            const o = terminal.byCase.get(`${backend}/${mode}`)![name]!
            const ctx = `${JSON.stringify(o)}\nqueued: ${JSON.stringify(terminal.queued)}`
            expect(o.error, ctx).toBeUndefined()
            expect(o.report, ctx).toMatch(/refused 1\b/)
            expect(o.report, ctx).not.toContain('BREACH')
            expect(terminal.queued.includes(terminal.tokens.get(`${backend}/${mode}`)![j]!), ctx).toBe(false)
          })
        }
      })
    }
  }
}
