// The Landlock backend end to end on this kernel: what the probe reports, what each mode lets a
// command do, the session temp dir, the ruleset cache, and 1000 confined runs that leave the host
// unrestricted and holding no extra fds.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { isInvalidRequestError } from '../../../src/policy/errors.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { describeWithBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})
function workDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-e2e-')))
  dirs.push(d)
  return d
}
const sh = (script: string, cwd: string, env?: NodeJS.ProcessEnv) => specFor(['/bin/sh', '-c', script], cwd, env)
const hostFds = () => fs.readdirSync('/proc/self/fd').length
const rulesetFds = () =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).includes('landlock')
    } catch {
      return false
    }
  }).length

await describeWithBackend('landlock', 'Landlock backend', (sandbox) => {
  it('reports ABI, enforcement per mode, governed classes and its limits truthfully', () => {
    const cap = sandbox().capabilities.backends.landlock!
    expect(cap).toMatchObject({ usable: true, seccomp: true, supervisor: true })
    expect(cap.abi).toBeGreaterThanOrEqual(6)
    expect(cap.enforcement).toEqual({
      'read-only': { inherit: 'full', deny: 'partial' },
      'workspace-write': { inherit: 'partial', deny: 'partial' },
    })
    // network: deny leaves /proc/PID/net of host processes readable (the account names it).
    expect(cap.accounts?.['read-only'].deny.ungoverned).toEqual(['network'])
    expect(cap.governs?.['read-only']).toEqual(
      expect.arrayContaining([
        'content',
        'names',
        'metadata',
        'processes',
        'signals',
        'ipc',
        'keyrings',
        'terminals',
        'lifetime',
      ]),
    )
    expect(cap.governs?.['workspace-write']).not.toContain('metadata')
    expect(cap.accounts?.['workspace-write'].inherit.ungoverned).toEqual(['metadata'])
    // The canary really ran: each class was refused on this kernel.
    // The read-only view's mounts refuse the write and the chmod outside before Landlock would.
    expect(cap.canary).toMatchObject({
      write_outside: 30,
      chmod: 30,
      signal: 1,
      prlimit: 1,
      keyring: 1,
      tiocsti: 1,
      watch: 1,
    })
    expect(cap.limitations.join('\n')).toMatch(/pathname unix sockets/)
    expect(cap.remedy).toBeTruthy()
    expect(cap.probeMs).toBeGreaterThan(0)
  })

  it('read-only: reads and /dev/null work, writes are denied (EROFS: the view refuses first), enforcement full', async () => {
    const dir = workDir()
    fs.writeFileSync(path.join(dir, 'f'), 'data\n')
    const c = sandbox().confine(
      sh('cat f; ls / >/dev/null && echo listed; echo x > /dev/null && echo devnull; echo x > g', dir),
      {
        mode: 'read-only',
        workspaceRoot: dir,
      },
    )
    expect(c).toMatchObject({ backend: 'landlock', enforcement: 'full' })
    expect(c.spec.confinement).toMatchObject({ backend: 'landlock', mode: 'read-only' })
    const r = await runSpec(c.spec)
    expect(r.stdout).toBe('data\nlisted\ndevnull\n')
    expect(r.stderr).toMatch(/Read-only file system/)
    expect(r.exitCode).not.toBe(0)
    expect(fs.existsSync(path.join(dir, 'g'))).toBe(false)
  })

  it('workspace-write: the root, extra roots and the private TMPDIR are writable; /tmp is not; enforcement partial', async () => {
    const dir = workDir()
    const extra = workDir()
    const c = sandbox().confine(
      sh(
        'echo a > "$ROOTDIR/a" && mkdir "$ROOTDIR/d" && mv "$ROOTDIR/a" "$ROOTDIR/d/a" && echo b > "$EXTRA/b" && echo t > "$TMPDIR/t" && echo ok; echo x > /tmp/cordon-e2e-host-$$ || echo denied',
        dir,
        {
          ROOTDIR: dir,
          EXTRA: extra,
        },
      ),
      { mode: 'workspace-write', workspaceRoot: dir, writableRoots: [extra], sessionId: 's1' },
    )
    expect(c.enforcement).toBe('partial')
    expect(c.tempDir).toMatch(/\/sessions\/[0-9]+-s1-[A-Za-z0-9]{6}\/m\/t$/)
    expect(c.spec.env?.TMPDIR).toBe(c.tempDir)
    expect(fs.statSync(c.tempDir!).mode & 0o777).toBe(0o700)
    const r = await runSpec(c.spec)
    expect(r.stdout).toBe('ok\ndenied\n')
    expect(fs.readFileSync(path.join(dir, 'd', 'a'), 'utf8')).toBe('a\n')
    expect(fs.readFileSync(path.join(extra, 'b'), 'utf8')).toBe('b\n')
    expect(fs.readFileSync(path.join(c.tempDir!, 't'), 'utf8')).toBe('t\n')
  })

  it('one private temp dir per session, reused within it', () => {
    const dir = workDir()
    const a1 = sandbox().confine(sh('true', dir), {
      mode: 'workspace-write',
      workspaceRoot: dir,
      sessionId: 'a',
    }).tempDir
    const a2 = sandbox().confine(sh('true', dir), {
      mode: 'workspace-write',
      workspaceRoot: dir,
      sessionId: 'a',
    }).tempDir
    const b = sandbox().confine(sh('true', dir), {
      mode: 'workspace-write',
      workspaceRoot: dir,
      sessionId: 'b/../x',
    }).tempDir
    expect(a1).toBe(a2)
    expect(b).not.toBe(a1)
    // Each session's dir (<session>/m/t) lies in cordon's private layout, side by side, never in the host /tmp.
    const sessionOf = (temp: string) => path.dirname(path.dirname(temp))
    expect(path.dirname(sessionOf(b!))).toBe(path.dirname(sessionOf(a1!)))
    expect(path.basename(sessionOf(b!))).toMatch(/^[0-9]+-b_.._x-[A-Za-z0-9]{6}$/)
    // read-only gets the session's private temp dir too (and writes nothing else).
    expect(sandbox().confine(sh('true', dir), { mode: 'read-only', workspaceRoot: dir, sessionId: 'a' }).tempDir).toBe(
      a1,
    )
  })

  it('dispose removes the session temp dirs and closes the cached rulesets', async () => {
    const own = await LocalSandbox.create({ backends: ['landlock'] })
    const dir = workDir()
    const c = own.confine(sh('true', dir), { mode: 'workspace-write', workspaceRoot: dir, sessionId: 'gone' })
    expect(fs.existsSync(c.tempDir!)).toBe(true)
    expect(own.openRulesets).toBe(1)
    await own.dispose()
    expect(fs.existsSync(c.tempDir!)).toBe(false)
    expect(own.openRulesets).toBe(0)
    expect(() => own.confine(sh('true', dir), { mode: 'read-only', workspaceRoot: dir })).toThrow(/dispose/)
  })

  it('dispose removes what a command left in its temp dir (files, nested dirs, links out) and follows no link', async () => {
    const dir = workDir()
    const outside = workDir()
    fs.writeFileSync(path.join(outside, 'keep'), 'host file\n')
    for (const nested of [false, true]) {
      const own = await LocalSandbox.create({ backends: ['landlock'] })
      const c = own.confine(
        sh(
          // Links to the outside dir and file, flat and (second pass) inside a nested dir too.
          `cd "$TMPDIR" && echo x > f && ln -s ${outside} dirlink && ln -s ${outside}/keep filelink${
            nested ? ` && mkdir -p a/b && ln -s ${outside} a/b/dirlink && ln -s ${outside}/keep a/filelink` : ''
          }`,
          dir,
        ),
        { mode: 'workspace-write', workspaceRoot: dir, sessionId: `left-${nested}` },
      )
      const r = await runSpec(c.spec)
      expect(r.exitCode, r.stderr).toBe(0)
      // Control: the links reach the host's file from the temp dir.
      expect(fs.readFileSync(path.join(c.tempDir!, 'filelink'), 'utf8')).toBe('host file\n')
      await own.dispose()
      expect(fs.existsSync(path.dirname(c.tempDir!))).toBe(false)
      expect(fs.readdirSync(outside)).toEqual(['keep'])
      expect(fs.readFileSync(path.join(outside, 'keep'), 'utf8')).toBe('host file\n')
    }
  })

  it('danger-full-access never asks a backend and strips any confinement', () => {
    const dir = workDir()
    const spec = {
      ...sh('true', dir),
      confinement: {
        backend: 'landlock' as const,
        mode: 'read-only' as const,
        steps: { dropCaps: true, dropBounding: false, capLast: 40, noNewPrivs: true },
      },
    }
    const c = sandbox().confine(spec, { mode: 'danger-full-access', workspaceRoot: dir })
    expect(c).toEqual({ spec: sh('true', dir), backend: 'none' })
  })

  it('network deny: read-only is partial (/proc/PID/net); a private loopback works, the host loopback is unreachable (control: reachable unconfined)', async () => {
    const dir = workDir()
    const net = await import('node:net')
    const server = net.createServer((s) => s.end('host\n'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as { port: number }).port
    const script =
      'import socket,sys\n' +
      'l=socket.socket(); l.bind(("127.0.0.1",0)); l.listen(); print("listen ok")\n' +
      'try:\n  c=socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1); print("host:", c.recv(10).decode().strip())\n' +
      'except OSError as e: print("host unreachable")\n'
    const spec = specFor(['/usr/bin/python3', '-c', script, String(port)], dir)
    try {
      const control = await runSpec(spec)
      expect(control.stdout).toBe('listen ok\nhost: host\n')
      const c = sandbox().confine(spec, { mode: 'read-only', workspaceRoot: dir, network: 'deny' })
      expect(c.enforcement).toBe('partial')
      expect(c.plan?.backend === 'landlock' && c.plan.namespaces.net).toBe(true)
      expect((await runSpec(c.spec)).stdout).toBe('listen ok\nhost unreachable\n')
    } finally {
      server.close()
    }
  })

  it('a recreated root: refused in the session that pinned it (ROOT_CHANGED); a new session gets a fresh ruleset that writes into the new root', async () => {
    const base = workDir()
    const root = path.join(base, 'ws')
    fs.mkdirSync(root)
    const policy = { mode: 'workspace-write' as const, workspaceRoot: root, sessionId: 'recreate' }
    const first = sandbox().confine(sh('echo 1 > one', root), policy)
    expect(sandbox().confine(sh('true', root), policy).spec.confinement!.steps!.ruleset).toBe(
      first.spec.confinement!.steps!.ruleset,
    )
    fs.rmSync(root, { recursive: true })
    fs.mkdirSync(root)
    expect(() => sandbox().confine(sh('true', root), policy)).toThrow(
      expect.objectContaining({ name: 'RootChangedError', code: 'ROOT_CHANGED', path: root }),
    )
    const second = sandbox().confine(sh('echo 2 > two && echo ok', root), { ...policy, sessionId: 'recreate-2' })
    expect(second.spec.confinement!.steps!.ruleset).not.toBe(first.spec.confinement!.steps!.ruleset)
    expect((await runSpec(second.spec)).stdout).toBe('ok\n')
    expect(fs.readFileSync(path.join(root, 'two'), 'utf8')).toBe('2\n')
  })

  it('a missing workspace root is never skipped', () => {
    const base = workDir()
    try {
      sandbox().confine(sh('true', base), { mode: 'workspace-write', workspaceRoot: path.join(base, 'missing') })
      expect.unreachable()
    } catch (error) {
      expect(isInvalidRequestError(error)).toBe(true)
    }
  })

  it('after 1000 confined runs the host can still write anywhere and holds no extra fds', async () => {
    const own = await LocalSandbox.create({ backends: ['landlock'] })
    const runtime = new LocalSubprocessRuntime()
    const dir = workDir()
    // One run first: the launcher (and its control socket) exist from then on.
    await runtime.spawn(specFor(['/bin/true'], dir, {})).done
    await runtime.spawn(own.confine(specFor(['/bin/true'], dir), { mode: 'read-only', workspaceRoot: '/' }).spec).done
    const before = hostFds()
    const rulesetsBefore = rulesetFds() - own.openRulesets
    const policies = [
      { mode: 'read-only' as const, workspaceRoot: dir },
      { mode: 'workspace-write' as const, workspaceRoot: dir, sessionId: 'k' },
      { mode: 'read-only' as const, workspaceRoot: dir, network: 'deny' as const },
    ]
    for (let i = 0; i < 1000; i++) {
      const c = own.confine(
        { ...specFor(['/bin/true'], dir), stdio: { stdin: 'ignore', stdout: 'inherit', stderr: 'inherit' } },
        policies[i % 3]!,
      )
      const handle = runtime.spawn(c.spec)
      expect((await handle.done).exitCode).toBe(0)
      await handle.waitForExit()
    }
    // Read-only rulesets do not depend on the root (nothing is writable but the temp dir), and a
    // denied network with a private namespace needs no TCP rules: two distinct rulesets in all.
    expect(own.openRulesets).toBe(2)
    expect(rulesetFds()).toBe(rulesetsBefore + 2)
    // The last pidfd closes in its uv_close callback, a loop turn or two after the exit.
    for (let i = 0; i < 20 && hostFds() > before + 3; i++) await new Promise((r) => setTimeout(r, 10))
    expect(hostFds()).toBeLessThanOrEqual(before + 3)
    await own.dispose()
    await runtime.dispose()
    expect(rulesetFds()).toBe(rulesetsBefore)
    expect(hostFds()).toBeLessThanOrEqual(before)
    // The host is never restricted: it writes outside every grant, and carries no filter or NNP.
    const probe = path.join(os.tmpdir(), `cordon-host-write-${process.pid}`)
    fs.writeFileSync(probe, 'host')
    fs.chmodSync(probe, 0o600)
    fs.rmSync(probe)
    fs.writeFileSync(path.join(dir, 'host'), 'host')
    const status = fs.readFileSync('/proc/self/status', 'utf8')
    expect(status).toMatch(/NoNewPrivs:\s+0/)
    expect(status).toMatch(/Seccomp:\s+0/)
  }, 120_000)
})
