// A confined run must not leave a set-id binary behind: on a root host a setuid-root file a run
// made in its workspace is a root escalation once the run ends (bubblewrap's nosuid mounts end with
// it; Landlock does not govern modes, so on Landlock even a file outside the roots was open).
// Under each backend in workspace-write, `chmod 4755`, `chmod g+s`, `install -m 4755` and
// `os.open(..., O_CREAT, 0o4755)` fail, and no file on disk has S_ISUID or S_ISGID; `chmod 755`,
// `chmod +x` and `chmod 644` still work; openat2 (not filtered) leaves no bit once written to.
// Control: the same script unconfined sets the bits.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const ENV = { PATH: '/usr/bin:/bin' }
const SETID = 0o6000
const MADE = ['chmod-suid', 'chmod-sgid', 'install-suid', 'open-suid'] as const

// openat2 carries its mode in a struct seccomp cannot read: it makes an empty setuid file, whose
// first write (no CAP_FSETID in a confined command) clears the bit again.
const OPENAT2 = [
  'import ctypes, os, struct',
  'how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o4755, 0)',
  'fd = ctypes.CDLL(None).syscall(437, -100, b"openat2-suid", how, 24)',
  'os.write(fd, b"x")',
].join('; ')

/** The attack, step by step; each step prints `name=status`. `outside` is a file outside the roots. */
function script(outside: string): string {
  return [
    'cp /usr/bin/id chmod-suid; chmod 4755 chmod-suid; echo chmod-suid=$?',
    'cp /usr/bin/id chmod-sgid; chmod g+s chmod-sgid; echo chmod-sgid=$?',
    'install -m 4755 /usr/bin/id install-suid; echo install-suid=$?',
    `/usr/bin/python3 -c "import os; os.close(os.open('open-suid', os.O_CREAT | os.O_WRONLY, 0o4755))" 2>/dev/null; echo open-suid=$?`,
    `chmod 4755 ${outside}; echo outside=$?`,
    `/usr/bin/python3 -c '${OPENAT2}'; echo openat2=$?`,
    'cp /usr/bin/id plain && chmod 755 plain && chmod +x plain && chmod 644 plain && chmod 755 plain; echo plain=$?',
  ].join('\n')
}

/** What each step exited with. */
function statuses(stdout: string): Record<string, number> {
  return Object.fromEntries(
    stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), Number(l.slice(l.indexOf('=') + 1))]),
  )
}

/** The set-id bits of a file, or undefined when it was never made. */
function setidOf(file: string): number | undefined {
  return fs.existsSync(file) ? fs.statSync(file).mode & SETID : undefined
}

/** A workspace and, in another directory, a host file outside it. */
function layout(): { root: string; outside: string } {
  const root = scratchDir('cordon-setid-root')
  const outside = path.join(scratchDir('cordon-setid-outside'), 'id')
  fs.copyFileSync('/usr/bin/id', outside)
  fs.chmodSync(outside, 0o755)
  return { root, outside }
}

describe('set-id modes a confined run makes', () => {
  it('control: unconfined, every step succeeds and leaves S_ISUID or S_ISGID behind', () => {
    const { root, outside } = layout()
    const r = spawnSync('/bin/sh', ['-c', script(outside)], { cwd: root, env: ENV, encoding: 'utf8' })
    expect(statuses(r.stdout), r.stderr).toEqual({
      'chmod-suid': 0,
      'chmod-sgid': 0,
      'install-suid': 0,
      'open-suid': 0,
      outside: 0,
      openat2: 0,
      plain: 0,
    })
    for (const name of MADE) expect(setidOf(path.join(root, name)), name).not.toBe(0)
    expect(setidOf(outside)).toBe(0o4000)
  })

  for (const backend of TEST_BACKENDS as readonly SandboxBackendName[]) {
    it(`${backend}, workspace-write: every set-id step fails and nothing on disk is set-id; plain modes work`, async (ctx) => {
      await needBackend(ctx, backend)
      const { root, outside } = layout()
      const sandbox = await LocalSandbox.create({ backends: [backend] })
      try {
        const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
        const r = await runSpec(sandbox.confine(specFor(['/bin/sh', '-c', script(outside)], root, ENV), policy).spec)
        const got = statuses(r.stdout)
        expect(Object.keys(got).sort(), r.stderr).toEqual([...MADE, 'openat2', 'outside', 'plain'].sort())
        for (const name of [...MADE, 'outside']) expect(got[name], `${name}: ${r.stderr}`).not.toBe(0)
        expect(got.plain, r.stderr).toBe(0)
        for (const name of MADE) expect(setidOf(path.join(root, name)) ?? 0, name).toBe(0)
        expect(setidOf(outside)).toBe(0)
        expect(got.openat2, r.stderr).toBe(0) // allowed, and its write cleared the bit:
        expect(setidOf(path.join(root, 'openat2-suid'))).toBe(0)
        expect(fs.statSync(path.join(root, 'plain')).mode & 0o7777).toBe(0o755)
      } finally {
        await sandbox.dispose()
      }
    })
  }
})
