// The bubblewrap backend end to end with the real bwrap: what the probe reports, what each mode
// lets a command do (checked on the host), network deny, termination of the whole tree, and fail
// closed for real (bwrap removed from PATH, bwrap vanished after the probe, bwrap refusing).
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { isInvalidRequestError, isSandboxUnavailableError } from '../../../src/policy/errors.js'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import { REMEDY_INSTALL_BUBBLEWRAP } from '../../../src/sandbox/bubblewrap/probe.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { probeBackends } from '../../../src/sandbox/probe.js'
import { LocalShellExecutor, type ShellSandbox } from '../../../src/shell/executor.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { describeWithBackend, needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

/** Host pids whose command line contains `marker` (the pid namespace hides them from the command, not from us). */
function hostPidsWith(marker: string): number[] {
  const pids: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) pids.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}

const executors: LocalShellExecutor[] = []
afterAll(async () => {
  await Promise.all(executors.map((e) => e.dispose()))
})
function executorFor(sandbox: ShellSandbox, root: string): LocalShellExecutor {
  const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
  executors.push(executor)
  return executor
}

await describeWithBackend('bubblewrap', 'bubblewrap backend', (sandbox) => {
  it('reports the bwrap it found, its version, full enforcement per mode and its limits', () => {
    const cap = sandbox().capabilities.backends.bubblewrap!
    expect(cap).toMatchObject({ usable: true, seccomp: true, supervisor: true })
    expect(path.isAbsolute(cap.executable!)).toBe(true)
    expect(cap.version).toMatch(/^bubblewrap \d+\.\d+/)
    expect(cap.enforcement).toEqual({
      'read-only': { inherit: 'full', deny: 'full' },
      'workspace-write': { inherit: 'full', deny: 'full' },
    })
    expect(cap.governs?.['workspace-write']).toEqual(
      expect.arrayContaining([
        'content',
        'names',
        'metadata',
        'network',
        'processes',
        'signals',
        'ipc',
        'keyrings',
        'terminals',
        'lifetime',
      ]),
    )
    expect(cap.limitations.join('\n')).toMatch(/abstract unix sockets/)
    expect(cap.limitations.join('\n')).toMatch(/pathname unix sockets/)
    // The canary really ran inside bwrap: the host is outside its pid namespace, the rest refused.
    expect(cap.canary).toMatchObject({ signal: 3, prlimit: 1, keyring: 1, tiocsti: 1, lease: 1 })
  })

  it('the default chain picks Landlock for read-only and bubblewrap for workspace-write', async () => {
    const chain = await LocalSandbox.create()
    const dir = scratchDir('cordon-bwrap-chain')
    try {
      const spec = {
        argv: ['true'],
        cwd: dir,
        graceMs: 500,
        stdio: { stdin: 'ignore' as const, stdout: 'pipe' as const, stderr: 'pipe' as const },
      }
      if (chain.capabilities.backends.landlock?.enforcement?.['read-only'].inherit === 'full') {
        expect(chain.confine(spec, { mode: 'read-only', workspaceRoot: dir }).backend).toBe('landlock')
      }
      if (chain.capabilities.backends.landlock?.enforcement?.['workspace-write'].inherit !== 'full') {
        expect(chain.confine(spec, { mode: 'workspace-write', workspaceRoot: dir })).toMatchObject({
          backend: 'bubblewrap',
          enforcement: 'full',
        })
      }
    } finally {
      await chain.dispose()
    }
  })

  it('read-only: reads work, a write is refused with EROFS and reported denied with its path', async () => {
    const root = scratchDir('cordon-bwrap-ro')
    fs.writeFileSync(path.join(root, 'f'), 'data\n')
    const executor = executorFor(sandbox(), root)
    const policy: SandboxExecutionPolicy = { mode: 'read-only', workspaceRoot: root }
    const r = await executor.run(
      executor.resolve({ command: 'cat f; echo x > /dev/null && echo devnull; echo x > g', sandboxPolicy: policy }),
    )
    expect(r.stdout.text).toBe('data\ndevnull\n')
    expect(r.stderr.text).toMatch(/Read-only file system/)
    expect(r.exitCode).not.toBe(0)
    expect(r.sandbox).toMatchObject({
      mode: 'read-only',
      denied: true,
      backend: 'bubblewrap',
      enforcement: 'full',
      deniedPaths: [path.join(root, 'g')],
    })
    expect(fs.existsSync(path.join(root, 'g'))).toBe(false)
  })

  it('workspace-write: root, extra roots and TMPDIR are writable; outside, chmod outside and the host /tmp are refused', async () => {
    const base = scratchDir('cordon-bwrap-ww')
    const [root, extra, outside] = ['root', 'extra', 'outside'].map((d) => path.join(base, d)) as [
      string,
      string,
      string,
    ]
    for (const d of [root, extra, outside]) fs.mkdirSync(d)
    fs.writeFileSync(path.join(outside, 'victim'), 'original\n', { mode: 0o644 })
    fs.writeFileSync(path.join(root, 'mine'), 'mine\n', { mode: 0o644 })
    const tag = `cordon-bwrap-${process.pid}-${Date.now()}`
    const executor = executorFor(sandbox(), root)
    const policy: SandboxExecutionPolicy = {
      mode: 'workspace-write',
      workspaceRoot: root,
      writableRoots: [extra],
      sessionId: 'bwrap-e2e',
    }
    const command = [
      'echo in > in && echo wrote-root',
      `echo ex > ${extra}/ex && echo wrote-extra`,
      'echo t > "$TMPDIR/t" && echo "wrote-tmp $TMPDIR"',
      'chmod 600 mine && echo chmod-inside',
      `chmod 600 ${outside}/victim && echo BREACH-chmod`,
      `touch -d 2001-01-01 ${outside}/victim && echo BREACH-utime`,
      `echo pwned > ${outside}/victim && echo BREACH-write`,
      `echo pwned > /tmp/${tag} && echo BREACH-tmp`,
      `mkdir /tmp/${tag}.d && echo BREACH-tmpdir`,
      'exit 3',
    ].join('; ')
    const before = fs.statSync(path.join(outside, 'victim'))
    const r = await executor.run(executor.resolve({ command, sandboxPolicy: policy }))
    const tempDir = /wrote-tmp (\S+)/.exec(r.stdout.text)?.[1]
    expect(r.stdout.text).toContain('wrote-root\nwrote-extra\n')
    expect(r.stdout.text).toContain('chmod-inside')
    expect(r.stdout.text).not.toContain('BREACH')
    expect(r.exitCode).toBe(3)
    // Checked on the host.
    expect(fs.readFileSync(path.join(root, 'in'), 'utf8')).toBe('in\n')
    expect(fs.readFileSync(path.join(extra, 'ex'), 'utf8')).toBe('ex\n')
    expect(tempDir).toMatch(/\/sessions\/[0-9]+-bwrap-e2e-[A-Za-z0-9]{6}\/m\/t$/)
    expect(fs.readFileSync(path.join(tempDir!, 't'), 'utf8')).toBe('t\n')
    expect(fs.statSync(path.join(root, 'mine')).mode & 0o777).toBe(0o600)
    const after = fs.statSync(path.join(outside, 'victim'))
    expect([after.mode, after.mtimeMs, fs.readFileSync(path.join(outside, 'victim'), 'utf8')]).toEqual([
      before.mode,
      before.mtimeMs,
      'original\n',
    ])
    expect(fs.existsSync(`/tmp/${tag}`) || fs.existsSync(`/tmp/${tag}.d`)).toBe(false)
    expect(r.stderr.text.match(/Read-only file system/g)?.length).toBeGreaterThanOrEqual(4)
    expect(r.sandbox).toMatchObject({
      mode: 'workspace-write',
      denied: true,
      backend: 'bubblewrap',
      enforcement: 'full',
    })
    expect(r.sandbox?.deniedPaths).toEqual(expect.arrayContaining([path.join(outside, 'victim'), `/tmp/${tag}`]))
  })

  it('network deny: TCP to a host listener does not arrive; with network inherit it does (control)', async () => {
    const root = scratchDir('cordon-bwrap-net')
    let accepted = 0
    const server = net.createServer((s) => {
      accepted++
      s.destroy()
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as net.AddressInfo).port
    try {
      const executor = executorFor(sandbox(), root)
      const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`
      const denied = await executor.run(
        executor.resolve({ command, sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root, network: 'deny' } }),
      )
      expect(denied.stdout.text).not.toContain('CONNECTED')
      expect(denied.exitCode).not.toBe(0)
      expect(accepted).toBe(0)
      const inherited = await executor.run(
        executor.resolve({ command, sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root } }),
      )
      expect(inherited.stdout.text).toContain('CONNECTED')
      await until(() => accepted === 1)
    } finally {
      server.close()
    }
  })

  it('terminate() ends the whole tree: a sleep inside is gone from the host afterwards', async () => {
    const root = scratchDir('cordon-bwrap-term')
    const marker = `${4000 + (process.pid % 1000)}.${Date.now() % 100000}`
    const runtime = new LocalSubprocessRuntime()
    try {
      const confined = sandbox().confine(
        {
          argv: ['/bin/sh', '-c', `sleep ${marker} & sleep ${marker}; wait`],
          cwd: root,
          graceMs: 500,
          stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
        },
        { mode: 'workspace-write', workspaceRoot: root },
      )
      const handle = runtime.spawn(confined.spec)
      await until(() => hostPidsWith(`sleep\0${marker}`).length === 2)
      handle.terminate()
      expect(await handle.waitForExit()).toBe(true)
      const outcome = await handle.done
      expect(outcome.signal === 'SIGTERM' || outcome.exitCode !== 0).toBe(true)
      await until(() => hostPidsWith(`sleep\0${marker}`).length === 0, 2000)
    } finally {
      await runtime.dispose()
    }
  })

  it('a background job left behind dies with the command (the pid namespace ends), and kill() of start() ends the tree', async () => {
    const root = scratchDir('cordon-bwrap-bg')
    const executor = executorFor(sandbox(), root)
    const policy: SandboxExecutionPolicy = { mode: 'workspace-write', workspaceRoot: root }
    const left = `${5000 + (process.pid % 1000)}.${Date.now() % 100000}`
    const r = await executor.run(executor.resolve({ command: `sleep ${left} & echo started`, sandboxPolicy: policy }))
    expect(r.stdout.text).toBe('started\n')
    await until(() => hostPidsWith(`sleep\0${left}`).length === 0, 2000)

    const bg = `${6000 + (process.pid % 1000)}.${Date.now() % 100000}`
    const proc = executor.start(executor.resolve({ command: `sleep ${bg}`, sandboxPolicy: policy }))
    await until(() => hostPidsWith(`sleep\0${bg}`).length === 1)
    expect(proc.kill()).toBe(true)
    await proc.done
    expect(proc.status).toBe('killed')
    await until(() => hostPidsWith(`sleep\0${bg}`).length === 0, 2000)
  })

  it('a missing writable root is refused before anything runs, as under Landlock', () => {
    const root = scratchDir('cordon-bwrap-missing')
    const spec = {
      argv: ['true'],
      cwd: root,
      graceMs: 500,
      stdio: { stdin: 'ignore' as const, stdout: 'pipe' as const, stderr: 'pipe' as const },
    }
    const error = (() => {
      try {
        sandbox().confine(spec, {
          mode: 'workspace-write',
          workspaceRoot: root,
          writableRoots: [path.join(root, 'gone')],
        })
      } catch (e) {
        return e
      }
      return undefined
    })()
    expect(isInvalidRequestError(error)).toBe(true)
    expect(String(error)).toMatch(/a granted root does not exist/)
  })

  it('bwrap refusing to build the sandbox is SANDBOX_UNAVAILABLE in the foreground and runnerFailed in the background', async () => {
    const base = scratchDir('cordon-bwrap-refuse')
    const root = path.join(base, 'root')
    fs.mkdirSync(root)
    // The extra root vanishes between confine() and the spawn: bwrap itself fails its bind.
    const vanishing: ShellSandbox = {
      confine(spec, policy) {
        const extra = policy.writableRoots![0]!
        fs.mkdirSync(extra, { recursive: true })
        const confined = sandbox().confine(spec, policy)
        fs.rmSync(extra, { recursive: true })
        return confined
      },
    }
    const executor = executorFor(vanishing, root)
    const target = path.join(root, 'ran')
    const policy: SandboxExecutionPolicy = {
      mode: 'workspace-write',
      workspaceRoot: root,
      writableRoots: [path.join(base, 'extra')],
    }
    const error = await executor
      .run(executor.resolve({ command: `echo ran > ${target}`, sandboxPolicy: policy }))
      .catch((e: unknown) => e)
    expect(isSandboxUnavailableError(error)).toBe(true)
    expect((error as { detail: unknown }).detail).toMatch(/^bwrap: Can't find source path .*extra/)
    expect(fs.existsSync(target)).toBe(false)

    // A new session: the vanished-and-recreated extra root is not the one the first session pinned.
    const again = { ...policy, sessionId: 'bwrap-refuse-2' }
    const proc = executor.start(executor.resolve({ command: `echo ran > ${target}`, sandboxPolicy: again }))
    await proc.done
    expect(proc.status).toBe('killed')
    expect(proc.readOutput().delta).toMatch(/bwrap: Can't find source path/)
    expect(proc.sandbox).toMatchObject({
      mode: 'workspace-write',
      denied: false,
      runnerFailed: true,
      backend: 'bubblewrap',
    })
    expect(fs.existsSync(target)).toBe(false)
  })
})

it('fail closed: a configured bwrap that is not there is unusable with the install remedy, and a pinned policy runs nothing', async () => {
  const bin = scratchDir('cordon-no-bwrap-path')
  const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], programs: { bwrap: path.join(bin, 'bwrap') } })
  try {
    const cap = sandbox.capabilities.backends.bubblewrap!
    expect(cap.usable).toBe(false)
    expect(cap.reason).toMatch(/the configured bwrap \S+ is refused: cannot be examined \(ENOENT\)/)
    expect(cap.remedy).toBe(REMEDY_INSTALL_BUBBLEWRAP)
    expect(cap.remedy).toMatch(/apt-get install -y bubblewrap/)
    const root = scratchDir('cordon-no-bwrap-root')
    const executor = executorFor(sandbox, root)
    const target = path.join(root, 'ran')
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const error = await executor
        .run(executor.resolve({ command: `echo ran > ${target}`, sandboxPolicy: { mode, workspaceRoot: root } }))
        .catch((e: unknown) => e)
      expect(isSandboxUnavailableError(error)).toBe(true)
      expect(String((error as Error).message)).toMatch(/apt-get install -y bubblewrap/)
    }
    expect(() =>
      executor.start(
        executor.resolve({
          command: `echo ran > ${target}`,
          sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root },
        }),
      ),
    ).toThrow(/SANDBOX_UNAVAILABLE|refusing to run/)
    expect(fs.existsSync(target)).toBe(false)
  } finally {
    await sandbox.dispose()
  }
})

it('fail closed: a bwrap that vanishes after the probe is SANDBOX_UNAVAILABLE before any spawn, nothing runs', async (ctx) => {
  await needBackend(ctx, 'bubblewrap')
  const bin = scratchDir('cordon-vanishing-bwrap')
  const real = (await probeBackends(['bubblewrap'])).backends.bubblewrap!.executable!
  fs.copyFileSync(real, path.join(bin, 'bwrap'))
  fs.chmodSync(path.join(bin, 'bwrap'), 0o755)
  const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], programs: { bwrap: path.join(bin, 'bwrap') } })
  try {
    const cap = sandbox.capabilities.backends.bubblewrap!
    if (!cap.usable) ctx.skip(`a copy of ${real} is not usable here: ${cap.reason}`)
    expect(cap.executable).toBe(path.join(bin, 'bwrap'))
    fs.rmSync(path.join(bin, 'bwrap'))
    const root = scratchDir('cordon-vanishing-root')
    const executor = executorFor(sandbox, root)
    const target = path.join(root, 'ran')
    const error = await executor
      .run(
        executor.resolve({
          command: `echo ran > ${target}`,
          sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root },
        }),
      )
      .catch((e: unknown) => e)
    expect(isSandboxUnavailableError(error)).toBe(true)
    expect(String((error as Error).message)).toMatch(/\S+bwrap is refused: cannot be examined \(ENOENT\)/)
    // The check comes before any spawn: start refuses as run does, and nothing ran.
    expect(() =>
      executor.start(
        executor.resolve({
          command: `echo ran > ${target}`,
          sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root },
        }),
      ),
    ).toThrow(/SANDBOX_UNAVAILABLE|refusing to run/)
    expect(fs.existsSync(target)).toBe(false)
  } finally {
    await sandbox.dispose()
  }
})
