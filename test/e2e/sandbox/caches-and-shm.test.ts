// Package caches and /dev/shm under confinement, on the real kernel with real bwrap: workspace-write
// caches go to cordon's confined cache (warm across runs, never the host's), read-only ones to the
// session TMPDIR, `cacheRoots: 'host'` grants the host's; bubblewrap gives each session its own
// /dev/shm (Python multiprocessing works), Landlock keeps it refused.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, type TestContext } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-caches'))
const home = path.join(base, 'home')
const priv = path.join(base, 'private')
fs.mkdirSync(path.join(home, '.npm'), { recursive: true })
const env = { ...process.env, HOME: home, CORDON_PRIVATE_DIR: priv }
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

async function need(ctx: TestContext, backend: SandboxBackendName): Promise<void> {
  if (!(await requireBackend(backend))) ctx.skip(`the ${backend} backend is not usable on this host`)
}
const sh = (script: string, cwd: string) => specFor(['bash', '-c', script], cwd, { PATH: process.env.PATH })
const workspace = (name: string) => {
  const d = path.join(base, name)
  fs.mkdirSync(d, { recursive: true })
  return d
}

describe.each(['landlock', 'bubblewrap'] as const)('package caches [%s]', (backend) => {
  it('workspace-write: npm, pip and XDG caches live in the confined cache, shared across sessions; the host cache is untouched', async (ctx) => {
    await need(ctx, backend)
    const sandbox = await LocalSandbox.create({ backends: [backend], env })
    const root = workspace(`cache-${backend}`)
    try {
      const write =
        'mkdir -p "$npm_config_cache" && echo warm > "$npm_config_cache/entry" && echo "$npm_config_cache $PIP_CACHE_DIR $XDG_CACHE_HOME"; echo x > ~/.npm/poison && echo POISONED'
      const a = sandbox.confine(sh(write, root), { mode: 'workspace-write', workspaceRoot: root, sessionId: 'a' })
      const r = await runSpec({ ...a.spec, env: { ...a.spec.env, HOME: home } })
      const cache = path.join(priv, 'cache')
      expect(r.stdout.trim()).toBe(`${cache}/npm ${cache}/pip ${cache}/xdg`)
      expect(fs.existsSync(path.join(home, '.npm', 'poison'))).toBe(false)
      const b = sandbox.confine(sh('cat "$npm_config_cache/entry"', root), {
        mode: 'workspace-write',
        workspaceRoot: root,
        sessionId: 'b',
      })
      expect((await runSpec(b.spec)).stdout).toBe('warm\n')
      // A caller's explicit entry wins over the default.
      const own = sandbox.confine(specFor(['bash', '-c', 'echo $npm_config_cache'], root, { npm_config_cache: '/x' }), {
        mode: 'workspace-write',
        workspaceRoot: root,
      })
      expect((await runSpec(own.spec)).stdout).toBe('/x\n')
    } finally {
      await sandbox.dispose()
    }
  })

  it('read-only: caches go to the session TMPDIR and writing them works', async (ctx) => {
    await need(ctx, backend)
    const sandbox = await LocalSandbox.create({ backends: [backend], env })
    const root = workspace(`cache-ro-${backend}`)
    try {
      const c = sandbox.confine(
        sh('mkdir -p "$PIP_CACHE_DIR" && echo ok > "$PIP_CACHE_DIR/x" && cat "$PIP_CACHE_DIR/x"', root),
        {
          mode: 'read-only',
          workspaceRoot: root,
        },
      )
      expect(c.spec.env?.PIP_CACHE_DIR?.startsWith(`${c.tempDir}/`)).toBe(true)
      expect((await runSpec(c.spec)).stdout).toBe('ok\n')
    } finally {
      await sandbox.dispose()
    }
  })
})

describe('host caches and /dev/shm', () => {
  it("cacheRoots: 'host' grants the host's ~/.npm (control: the default refuses it)", async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], env })
    const root = workspace('cache-host')
    const script = 'echo host > ~/.npm/entry && echo WROTE'
    try {
      const refused = sandbox.confine(sh(script, root), { mode: 'workspace-write', workspaceRoot: root })
      expect((await runSpec({ ...refused.spec, env: { ...refused.spec.env, HOME: home } })).stdout).toBe('')
      const host = sandbox.confine(sh(script, root), {
        mode: 'workspace-write',
        workspaceRoot: root,
        cacheRoots: 'host',
      })
      expect((await runSpec({ ...host.spec, env: { ...host.spec.env, HOME: home } })).stdout).toBe('WROTE\n')
      expect(fs.readFileSync(path.join(home, '.npm', 'entry'), 'utf8')).toBe('host\n')
    } finally {
      await sandbox.dispose()
    }
  })

  it("cacheRoots: 'host' never grants cordon's state: a fallback private parent in ~/.cache stays read-only (control: a sibling cache is written)", async (ctx) => {
    await need(ctx, 'bubblewrap')
    // ~/.cache/cordon is where a host started without CORDON_PRIVATE_DIR or XDG_RUNTIME_DIR keeps
    // its probe verdict: a run that could write it would choose what a later host runs.
    const verdict = path.join(home, '.cache', 'cordon', 'probe-0.json')
    fs.mkdirSync(path.dirname(verdict), { recursive: true })
    fs.writeFileSync(verdict, '{"honest":true}')
    fs.mkdirSync(path.join(home, '.cache', 'other'), { recursive: true })
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], env })
    const root = workspace('cache-host-state')
    const script = `echo forged > ${verdict}; echo other > ${path.join(home, '.cache', 'other', 'entry')} && echo WROTE`
    try {
      const host = sandbox.confine(sh(script, root), {
        mode: 'workspace-write',
        workspaceRoot: root,
        cacheRoots: 'host',
      })
      const out = await runSpec({ ...host.spec, env: { ...host.spec.env, HOME: home } })
      expect(out.stdout).toBe('WROTE\n') // the control: the sibling cache dir was granted and written
      expect(fs.readFileSync(path.join(home, '.cache', 'other', 'entry'), 'utf8')).toBe('other\n')
      expect(fs.readFileSync(verdict, 'utf8')).toBe('{"honest":true}')
    } finally {
      await sandbox.dispose()
    }
  })

  const pool = `python3 -c "import multiprocessing as m; print(sum(m.Pool(2).map(abs, [-1, -2])))"`

  it('bubblewrap: Python multiprocessing works on a private /dev/shm; the host /dev/shm gets nothing', async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], env })
    const root = workspace('shm-bwrap')
    const probe = `/dev/shm/cordon-shm-probe-${process.pid}`
    const leak = `echo leak > ${probe} && cat ${probe}`
    const before = fs.readdirSync('/dev/shm').sort()
    try {
      for (const mode of ['read-only', 'workspace-write'] as const) {
        const c = sandbox.confine(sh(`${pool}; ${leak}`, root), {
          mode,
          workspaceRoot: root,
        })
        const r = await runSpec(c.spec)
        // The write worked, inside: it landed on the private /dev/shm.
        expect(r.stdout).toBe('3\nleak\n')
      }
      expect(fs.existsSync(probe)).toBe(false)
      expect(fs.readdirSync('/dev/shm').sort()).toEqual(before)
      // Control: the same write unconfined lands on the host's /dev/shm.
      expect((await runSpec(sh(leak, root))).stdout).toBe('leak\n')
      expect(fs.existsSync(probe)).toBe(true)
    } finally {
      fs.rmSync(probe, { force: true })
      await sandbox.dispose()
    }
  })

  it('Landlock keeps /dev/shm refused (control: unconfined it works); sharedMemory: true prefers bubblewrap', async (ctx) => {
    await need(ctx, 'landlock')
    const root = workspace('shm-landlock')
    expect((await runSpec(sh(pool, root))).stdout).toBe('3\n')
    const only = await LocalSandbox.create({ backends: ['landlock'], env })
    try {
      const r = await runSpec(only.confine(sh(pool, root), { mode: 'read-only', workspaceRoot: root }).spec)
      expect(r.exitCode).not.toBe(0)
      // EROFS where the run has a read-only view of the host (its mounts refuse first).
      expect(r.stderr).toMatch(/Permission denied|PermissionError|Read-only file system/)
    } finally {
      await only.dispose()
    }
    await need(ctx, 'bubblewrap')
    const chain = await LocalSandbox.create({ env })
    try {
      expect(chain.confine(sh(pool, root), { mode: 'read-only', workspaceRoot: root }).backend).toBe('landlock')
      expect(
        chain.confine(sh(pool, root), { mode: 'read-only', workspaceRoot: root, sharedMemory: true }).backend,
      ).toBe('bubblewrap')
    } finally {
      await chain.dispose()
    }
  })
})
