// Attacker's pass 4: the host's removal of what confined commands wrote in their session dirs
// (LocalSandbox.dispose: removedSmallTree, then native/remove-tree.cc). Attacks:
//  - a tree nested deeper than the walk holds fds for (600 levels), with names that are not
//    UTF-8 or hold a newline: the walk held one fd per level and left such a tree in place for
//    good (EMLINK; the stale-session sweep uses the same walk) — now a subtree at the depth
//    limit is moved up into the root and walked again;
//  - a racer at depth 1 of TMPDIR (tmp/a, a dir, exchanged with tmp/b, a link to a host dir)
//    run as a job of the session while a second run of the same session and workspace ends
//    and the host disposes: removedSmallTree lists tmp/ and then unlinks by path;
//  - a mount over a dir of TMPDIR (a removal would cross into it): the command cannot make one
//    the host sees.
// Controls: the racer against a removal by path (fs.rm) deletes host files; the host can mount
// there itself and sees it; the deep tree is really deeper than the walk's limit.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { linkSwapRacer, racing, victimDir } from './swap-racer.js'

const FILES = 30
const CONTROL_ROUNDS = 150
const ROUNDS = 15
const DEPTH = 600

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' }

const RACER = linkSwapRacer(FILES)

// In each dir of argv: a DEPTH-deep chain (by relative mkdir: no path limit), odd names, a fifo.
const DEEP = `
import os, sys
for top in sys.argv[1:]:
    os.chdir(top)
    for i in range(${DEPTH}):
        os.mkdir(b'd\\n\\xff'); os.chdir(b'd\\n\\xff')
    open('leaf', 'w').close()
    os.chdir(top)
    for name in (b'nl\\nname', b'bad\\xff', b'.', b'-rf'):
        try: open(name, 'w').close()
        except OSError: pass
    os.mkfifo('fifo')
print('made', flush=True)
`

/** The depth of the deepest directory under `dir`, measured by the host (by fd, no path limit). */
function depthOf(dir: string): number {
  const r = spawnSync(
    'python3',
    [
      '-c',
      'import os,sys\nd=0\nfor root,dirs,files in os.walk(sys.argv[1].encode()):\n d=max(d,root.count(b"/")-sys.argv[1].encode().count(b"/"))\nprint(d)',
      dir,
    ],
    { encoding: 'utf8' },
  )
  return Number(r.stdout.trim())
}

const victim = (base: string) => victimDir(base, FILES)

const spec = (argv: string[], cwd: string, stdout: 'pipe' | 'inherit' = 'inherit'): SubprocessSpawnSpec => ({
  argv,
  cwd,
  env: ENV,
  stdio: { stdin: 'ignore', stdout, stderr: 'inherit' },
  graceMs: 200,
})

describe('controls', () => {
  it('a removal by path (fs.rm) of a dir holding the depth-1 racer deletes host files', async () => {
    const base = scratchDir('cordon-rt4-rm-control')
    let hits = 0
    let rounds = 0
    while (hits === 0 && rounds < CONTROL_ROUNDS) {
      rounds++
      const v = victim(base)
      const session = path.join(base, `s${rounds}`)
      fs.mkdirSync(path.join(session, 'tmp'), { recursive: true })
      const racer: ChildProcess = spawn('python3', ['-c', RACER, path.join(session, 'tmp'), v.dir], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      await racing(racer)
      await new Promise<void>((resolve) => fs.rm(session, { recursive: true, force: true }, () => resolve()))
      racer.kill('SIGKILL')
      await new Promise((resolve) => racer.once('exit', resolve))
      if (v.left() < FILES) hits++
      fs.rmSync(session, { recursive: true, force: true })
    }
    expect(hits, `no host file lost in ${rounds} rounds`).toBeGreaterThan(0)
  }, 180_000)

  it('the host itself can mount inside a dir and sees the mount in its mountinfo', () => {
    const base = scratchDir('cordon-rt4-mount-control')
    const m = path.join(base, 'm')
    fs.mkdirSync(m)
    expect(spawnSync('mount', ['-t', 'tmpfs', 'none', m]).status).toBe(0)
    try {
      expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).toContain(` ${m} `)
    } finally {
      spawnSync('umount', [m])
    }
  })
})

for (const backend of TEST_BACKENDS)
  describe(`${backend}: dispose removes what the session's commands left, and nothing else`, () => {
    it(`a ${DEPTH}-deep tree with odd names in TMPDIR${backend === 'bubblewrap' ? ' and /dev/shm' : ''} is removed`, async (ctx) => {
      await needBackend(ctx, backend)
      const ws = scratchDir(`cordon-rt4-deep-${backend}`)
      const sandbox = await LocalSandbox.create({ backends: [backend] })
      const dirs = backend === 'bubblewrap' ? ['"$TMPDIR"', '/dev/shm'] : ['"$TMPDIR"']
      const c = sandbox.confine(
        spec(['sh', '-c', `python3 -c '${DEEP.replaceAll("'", `'"'"'`)}' ${dirs.join(' ')}`], ws),
        {
          mode: 'workspace-write',
          workspaceRoot: ws,
          sessionId: 'rt4-deep',
        },
      )
      const rt = new LocalSubprocessRuntime()
      const out = await rt.spawn(c.spec).done
      expect(out.exitCode).toBe(0)
      const session = path.dirname(c.tempDir as string)
      // Control for reach: the tree is in the session dir, deeper than the walk's fd limit (256).
      expect(depthOf(c.tempDir as string)).toBeGreaterThanOrEqual(DEPTH)
      if (backend === 'bubblewrap') expect(depthOf(path.join(session, 'shm'))).toBeGreaterThanOrEqual(DEPTH)
      await sandbox.dispose()
      await rt.dispose()
      expect(fs.existsSync(session), `the session dir ${session} is left behind`).toBe(false)
    }, 120_000)

    it(`a depth-1 racer in TMPDIR, a job of the session while another run ends and the host disposes (${ROUNDS} rounds)`, async (ctx) => {
      await needBackend(ctx, backend)
      const base = scratchDir(`cordon-rt4-race-${backend}`)
      const ws = path.join(base, 'ws')
      fs.mkdirSync(ws)
      const rt = new LocalSubprocessRuntime()
      let lost = 0
      let left = 0
      for (let round = 0; round < ROUNDS; round++) {
        const v = victim(base)
        const sandbox = await LocalSandbox.create({ backends: [backend] })
        const policy = { mode: 'workspace-write' as const, workspaceRoot: ws, sessionId: `rt4-race${round}` }
        const job = sandbox.confine(
          spec(
            ['python3', '-c', `import os, sys; sys.argv = ['', os.environ['TMPDIR'], sys.argv[1]]\n${RACER}`, v.dir],
            ws,
            'pipe',
          ),
          policy,
        )
        const jobHandle = rt.spawn(job.spec)
        await racing(jobHandle)
        // Control for reach: the racer's link leads to the host dir from the session's TMPDIR.
        // .run is the session's runtime dir, made before any run.
        expect(
          fs
            .readdirSync(job.tempDir as string)
            .filter((n) => n !== '.run')
            .sort(),
        ).toEqual(['a', 'b'])
        const second = sandbox.confine(spec(['sh', '-c', 'echo x > "$TMPDIR/second"'], ws), policy)
        expect(second.tempDir).toBe(job.tempDir)
        expect((await rt.spawn(second.spec).done).exitCode).toBe(0)
        await sandbox.dispose()
        jobHandle.terminate()
        await jobHandle.done.catch(() => undefined)
        if (v.left() < FILES) lost++
        if (fs.existsSync(path.dirname(job.tempDir as string))) left++
      }
      await rt.dispose()
      expect(lost, 'rounds in which the host deleted host files').toBe(0)
      // The racer may keep a name alive while it runs; what is left is the command's own.
      expect(left).toBeLessThanOrEqual(ROUNDS)
    }, 240_000)

    it('a mount the command makes over a dir of TMPDIR is not one the host sees', async (ctx) => {
      await needBackend(ctx, backend)
      const ws = scratchDir(`cordon-rt4-mount-${backend}`)
      const sandbox = await LocalSandbox.create({ backends: [backend] })
      const script = [
        'mkdir -p "$TMPDIR/m" "$TMPDIR/n"',
        'mount -t tmpfs none "$TMPDIR/m" 2>/dev/null && echo mounted-plain',
        `unshare -rm sh -c 'mount --bind / "$TMPDIR/n" && echo mounted-userns' 2>/dev/null`,
        'true',
      ].join('; ')
      const c = sandbox.confine(spec(['sh', '-c', script], ws), {
        mode: 'workspace-write',
        workspaceRoot: ws,
        sessionId: 'rt4-mount',
      })
      const rt = new LocalSubprocessRuntime()
      expect((await rt.spawn(c.spec).done).exitCode).toBe(0)
      // <session>/m/t: the host's own tmpfs is m/ (a root host's default temp bound), not below t/.
      const temp = c.tempDir as string
      const session = path.dirname(path.dirname(temp))
      const hostMounts = fs
        .readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .filter((l) => l.includes(`${temp}/`))
      expect(hostMounts).toEqual([])
      await sandbox.dispose()
      await rt.dispose()
      expect(fs.existsSync(session)).toBe(false)
      expect(fs.existsSync('/etc/passwd'), 'nothing of / went with it').toBe(true)
    }, 60_000)
  })
