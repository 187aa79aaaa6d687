// Read-only under bubblewrap leaves metadata to the mounts (issue 24, item 1): the host is bound
// read-only but for the run's writable set, so chmod, utime and xattrs work in the run's own
// TMPDIR and /dev/shm (unpacking, cp -a, chmod +x) and fail EROFS everywhere else: the workspace
// root, a file beside it, the root dir itself. Set-id modes stay refused (seccomp) even inside.
// Through a resident instance and a bwrap per run. The control: the same calls, unconfined, on
// the same kind of files the same user owns, all succeed, so what refuses them confined is the
// mount.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { needBackend } from '../../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../../support/sandbox/run-confined.js'
import { scratchDir } from '../../../support/scratch.js'

const EPERM = 1
const EROFS = 30
const OPS = ['chmod', 'utime', 'xattr'] as const

// argv: SHM_DIR OUTSIDE... ; makes a file in TMPDIR and one in SHM_DIR, then tries each call on
// those and on every OUTSIDE path; prints "LABEL OP ERRNO" (0: done).
const PROBE = `
import os, sys
out = []
def attempt(label, op, call):
    try:
        call()
        out.append(f'{label} {op} 0')
    except OSError as e:
        out.append(f'{label} {op} {e.errno}')
def calls(label, p):
    attempt(label, 'chmod', lambda: os.chmod(p, 0o700))
    attempt(label, 'utime', lambda: os.utime(p, (1e9, 1e9)))
    attempt(label, 'xattr', lambda: os.setxattr(p, 'user.cordon', b'1'))
inside = {'tmp': os.path.join(os.environ['TMPDIR'], 'meta-f'), 'shm': os.path.join(sys.argv[1], 'meta-f')}
for label, p in inside.items():
    open(p, 'w').close()
    calls(label, p)
    attempt(label, 'setuid', lambda: os.chmod(p, 0o4755))
    os.unlink(p)
for i, p in enumerate(sys.argv[2:]):
    calls(f'outside{i}', p)
print('\\n'.join(out))
`

/** A workspace root with a file, a file beside it; all the test's own. */
function layout(name: string) {
  const base = scratchDir(`cordon-ro-meta-${name}`)
  const root = path.join(base, 'ws')
  const tmp = path.join(base, 'tmp')
  const shm = path.join(base, 'shm')
  for (const d of [root, tmp, shm]) fs.mkdirSync(d)
  const inRoot = path.join(root, 'tracked.txt')
  const beside = path.join(base, 'beside.txt')
  fs.writeFileSync(inRoot, 'x\n')
  fs.writeFileSync(beside, 'y\n')
  return { root, tmp, shm, outside: [inRoot, beside, root] }
}

/** "LABEL OP" → errno, from the probe's output. */
function verdicts(stdout: string): Map<string, number> {
  return new Map(
    stdout
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([label, op, errno]) => [`${label} ${op}`, Number(errno)]),
  )
}

const modes = (paths: string[]) => paths.map((p) => fs.statSync(p).mode & 0o7777)

describe('read-only metadata under bubblewrap', () => {
  it('control: unconfined, every call succeeds on files the user owns, set-id modes included', async () => {
    const l = layout('control')
    const r = await runSpec(specFor(['/usr/bin/python3', '-c', PROBE, l.shm, ...l.outside], l.root, { TMPDIR: l.tmp }))
    expect(r.exitCode, r.stderr).toBe(0)
    const v = verdicts(r.stdout)
    for (const label of ['tmp', 'shm', 'outside0', 'outside1', 'outside2'])
      for (const op of OPS) expect(v.get(`${label} ${op}`), `${label} ${op}`).toBe(0)
    expect(v.get('tmp setuid')).toBe(0)
  })

  for (const resident of [true, false]) {
    const how = resident ? 'a resident instance' : 'a bwrap per run'
    it(`${how}: chmod, utime and xattrs work in TMPDIR and /dev/shm, fail EROFS outside; set-id modes refused`, async (ctx) => {
      await needBackend(ctx, 'bubblewrap')
      const l = layout(resident ? 'resident' : 'per-run')
      const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], residentInstances: resident })
      try {
        const before = modes(l.outside)
        const confined = sandbox.confine(specFor(['/usr/bin/python3', '-c', PROBE, '/dev/shm', ...l.outside], l.root), {
          mode: 'read-only',
          workspaceRoot: l.root,
        })
        expect(confined.backend).toBe('bubblewrap')
        const r = await runSpec(confined.spec)
        expect(r.exitCode, r.stderr).toBe(0)
        const v = verdicts(r.stdout)
        for (const op of OPS) {
          expect(v.get(`tmp ${op}`), `TMPDIR ${op}\n${r.stdout}`).toBe(0)
          expect(v.get(`shm ${op}`), `/dev/shm ${op}\n${r.stdout}`).toBe(0)
          for (const label of ['outside0', 'outside1', 'outside2'])
            expect(v.get(`${label} ${op}`), `BREAK ${label} ${op}\n${r.stdout}`).toBe(EROFS)
        }
        expect(v.get('tmp setuid')).toBe(EPERM)
        expect(v.get('shm setuid')).toBe(EPERM)
        expect(modes(l.outside), 'the host files keep their modes').toEqual(before)
        expect(confined.plan?.account.classes.metadata?.how).toMatch(
          /in the run's own temp dir and \/dev\/shm they work/,
        )
      } finally {
        await sandbox.dispose()
      }
    }, 60_000)
  }
})
