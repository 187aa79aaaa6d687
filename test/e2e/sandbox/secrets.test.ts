// Secrets stay secret: hidden paths, protected paths, other sessions' dirs and host agent sockets,
// on the real kernel with real bwrap, each attack beside its unconfined control. A fake $HOME
// (given to the sandbox as its environment) holds the "secrets", so nothing of the host's is read.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { InvalidRequestError, isSandboxUnavailableError } from '../../../src/policy/errors.js'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-secrets'))
const home = path.join(base, 'home')
const priv = path.join(base, 'private')
const env = { ...process.env, HOME: home, CORDON_PRIVATE_DIR: priv, SSH_AUTH_SOCK: path.join(base, 'agent', 'sock') }
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const SECRET = 'PRIVATE-KEY-MATERIAL'

beforeAll(() => {
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true })
  fs.mkdirSync(path.join(home, '.aws'), { recursive: true })
  fs.mkdirSync(path.join(home, '.cargo', 'bin'), { recursive: true })
  fs.mkdirSync(path.join(base, 'agent'))
  fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), SECRET)
  fs.writeFileSync(path.join(home, '.ssh', 'known_hosts'), 'github.com ssh-ed25519 AAAA')
  fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519.pub'), 'ssh-ed25519 AAAA me')
  fs.writeFileSync(path.join(home, '.aws', 'credentials'), SECRET)
  fs.writeFileSync(path.join(home, '.cargo', 'credentials.toml'), SECRET)
  fs.writeFileSync(path.join(home, '.cargo', 'bin', 'tool'), 'a tool')
  fs.writeFileSync(path.join(home, '.bash_history'), SECRET)
  fs.writeFileSync(path.join(home, '.bashrc'), 'export A=1')
  // Readable by nobody too (its control must succeed).
  execFileSync('chmod', ['-R', 'a+rX', base])
})

const sh = (script: string, cwd: string) => specFor(['bash', '-c', script], cwd, { PATH: process.env.PATH })
const workspace = (name: string) => {
  const d = path.join(base, name)
  fs.mkdirSync(d, { recursive: true })
  return d
}

/** Prints SECRET-READ for every listed file whose content could be read. */
const readAll = (files: string[]) =>
  files.map((f) => `cat ${JSON.stringify(f)} 2>/dev/null | grep -q ${SECRET} && echo SECRET-READ:${f}`).join('; ')

const HIDDEN_FILES = [
  path.join(home, '.ssh', 'id_ed25519'),
  path.join(home, '.aws', 'credentials'),
  path.join(home, '.cargo', 'credentials.toml'),
  path.join(home, '.bash_history'),
]

/** Skips (locally) or fails (CI) when `backend` is unusable here. */
async function need(ctx: TestContext, backend: SandboxBackendName): Promise<void> {
  if (!(await requireBackend(backend))) ctx.skip(`the ${backend} backend is not usable on this host`)
}

async function sandboxFor(backend: SandboxBackendName): Promise<LocalSandbox> {
  return LocalSandbox.create({ backends: [backend], env })
}

describe.each(['landlock', 'bubblewrap'] as const)('hidden paths [%s]', (backend) => {
  it.for(['read-only', 'workspace-write'] as const)(
    '%s: the default set cannot be read; its siblings can',
    async (mode, ctx) => {
      await need(ctx, backend)
      const sandbox = await sandboxFor(backend)
      const root = workspace(`ws-${backend}-${mode}`)
      try {
        // Control: the same script unconfined reads every secret.
        const control = await runSpec(sh(readAll(HIDDEN_FILES), root))
        expect(control.stdout.match(/SECRET-READ/g)).toHaveLength(HIDDEN_FILES.length)
        const c = sandbox.confine(
          sh(
            `${readAll(HIDDEN_FILES)}; cat ~/.ssh/known_hosts ~/.ssh/id_ed25519.pub ~/.cargo/bin/tool ~/.bashrc`,
            root,
          ),
          {
            mode,
            workspaceRoot: root,
          },
        )
        expect(c.enforcement).toBe(backend === 'landlock' && mode === 'workspace-write' ? 'partial' : 'full')
        // Landlock keeps file watches under workspace-write (test/escape/roots/fs-watch.test.ts): the account says so.
        const watched = backend === 'landlock' && mode === 'workspace-write'
        expect(c.plan?.account.classes.secrets?.governed).toBe(!watched)
        if (watched) expect(c.plan?.account.classes.secrets?.how).toMatch(/inotify, fanotify and dnotify/)
        const r = await runSpec({ ...c.spec, env: { ...c.spec.env, HOME: home } })
        expect(r.stdout).not.toContain('SECRET-READ')
        expect(r.stdout).toContain('github.com ssh-ed25519')
        expect(r.stdout).toContain('ssh-ed25519 AAAA me')
        expect(r.stdout).toContain('a tool')
        expect(r.stdout).toContain('export A=1')
      } finally {
        await sandbox.dispose()
      }
    },
  )

  it('/etc/shadow and a hidden key are not readable through /proc/self/root or /proc/1/root either', async (ctx) => {
    await need(ctx, backend)
    const sandbox = await sandboxFor(backend)
    const root = workspace(`ws-proc-${backend}`)
    const key = path.join(home, '.ssh', 'id_ed25519')
    const script = [
      `cat /proc/self/root${key} 2>/dev/null | grep -q ${SECRET} && echo READ-SELF`,
      `cat /proc/1/root${key} 2>/dev/null | grep -q ${SECRET} && echo READ-INIT`,
      `cat /proc/$PPID/root${key} 2>/dev/null | grep -q ${SECRET} && echo READ-PARENT`,
      'grep -q "^root:" /etc/shadow 2>/dev/null && echo READ-SHADOW',
    ].join('; ')
    try {
      const control = await runSpec(sh(script, root))
      expect(control.stdout).toContain('READ-SELF')
      expect(control.stdout).toContain('READ-SHADOW')
      const c = sandbox.confine(sh(script, root), { mode: 'read-only', workspaceRoot: root })
      const r = await runSpec(c.spec)
      expect(r.stdout).toBe('')
    } finally {
      await sandbox.dispose()
    }
  })

  it("a caller's hidden path adds to the set; opting out of an entry by name shows it again", async (ctx) => {
    await need(ctx, backend)
    const sandbox = await sandboxFor(backend)
    const root = workspace(`ws-optout-${backend}`)
    const own = path.join(base, 'own-secret')
    fs.writeFileSync(own, SECRET)
    fs.chmodSync(own, 0o644)
    try {
      const files = [own, ...HIDDEN_FILES]
      const c = sandbox.confine(sh(readAll(files), root), {
        mode: 'read-only',
        workspaceRoot: root,
        hiddenPaths: [own],
        hiddenDefaults: { except: ['aws'] },
      })
      const r = await runSpec(c.spec)
      expect(r.stdout.trim()).toBe(`SECRET-READ:${path.join(home, '.aws', 'credentials')}`)
      const none = sandbox.confine(sh(readAll(HIDDEN_FILES), root), {
        mode: 'read-only',
        workspaceRoot: root,
        hiddenDefaults: false,
      })
      expect((await runSpec(none.spec)).stdout.match(/SECRET-READ/g)).toHaveLength(HIDDEN_FILES.length)
      expect(() =>
        sandbox.plan({ mode: 'read-only', workspaceRoot: root, hiddenDefaults: { except: ['no-such-entry'] } }),
      ).toThrow(InvalidRequestError)
    } finally {
      await sandbox.dispose()
    }
  })

  it('a hidden file created after the first plan is hidden from the next run', async (ctx) => {
    await need(ctx, backend)
    const sandbox = await sandboxFor(backend)
    const root = workspace(`ws-late-${backend}`)
    const late = path.join(home, '.ssh', 'id_late')
    const netrc = path.join(home, '.netrc')
    const policy: SandboxExecutionPolicy = { mode: 'read-only', workspaceRoot: root }
    try {
      expect((await runSpec(sandbox.confine(sh('true', root), policy).spec)).exitCode).toBe(0)
      fs.writeFileSync(late, SECRET, { mode: 0o644 })
      fs.writeFileSync(netrc, SECRET, { mode: 0o644 })
      const r = await runSpec(sandbox.confine(sh(readAll([late, netrc]), root), policy).spec)
      expect(r.stdout).toBe('')
    } finally {
      fs.rmSync(late, { force: true })
      fs.rmSync(netrc, { force: true })
      await sandbox.dispose()
    }
  })
})

describe('hidden paths inside a writable root', () => {
  it('Landlock cannot hide them: partial, naming the path, and requireEnforcement full fails closed', async (ctx) => {
    await need(ctx, 'landlock')
    const sandbox = await sandboxFor('landlock')
    const root = workspace('ws-env-landlock')
    const dotenv = path.join(root, '.env')
    fs.writeFileSync(dotenv, SECRET)
    try {
      const policy: SandboxExecutionPolicy = { mode: 'workspace-write', workspaceRoot: root, hiddenPaths: [dotenv] }
      const c = sandbox.confine(sh(readAll([dotenv]), root), policy)
      expect(c.enforcement).toBe('partial')
      expect(c.plan?.account.classes.secrets).toMatchObject({ governed: false })
      expect(c.plan?.account.classes.secrets?.how).toContain(dotenv)
      expect((await runSpec(c.spec)).stdout).toContain('SECRET-READ') // what partial says: it stays readable
      let error: unknown
      try {
        sandbox.confine(sh('true', root), { ...policy, requireEnforcement: 'full' })
      } catch (e) {
        error = e
      }
      expect(isSandboxUnavailableError(error)).toBe(true)
    } finally {
      await sandbox.dispose()
    }
  })

  it('bubblewrap hides them (an empty read-only file), and a hidden path that is absent stays absent', async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await sandboxFor('bubblewrap')
    const root = workspace('ws-env-bwrap')
    const dotenv = path.join(root, '.env')
    const absent = path.join(root, 'secrets-dir')
    fs.writeFileSync(dotenv, SECRET)
    try {
      const c = sandbox.confine(
        sh(`${readAll([dotenv])}; echo x > ${dotenv} && echo WROTE; rm ${dotenv} && echo REMOVED; true`, root),
        { mode: 'workspace-write', workspaceRoot: root, hiddenPaths: [dotenv, absent] },
      )
      expect(c.enforcement).toBe('full')
      const r = await runSpec(c.spec)
      expect(r.stdout).toBe('')
      expect(fs.readFileSync(dotenv, 'utf8')).toBe(SECRET)
      expect(fs.existsSync(absent)).toBe(false) // no mount point was made for it
    } finally {
      await sandbox.dispose()
    }
  })
})

function gitRepo(name: string): string {
  const root = workspace(name)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' })
  git('init', '-q')
  git('-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'init')
  fs.mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true })
  return root
}

const PLANT = (root: string) =>
  [
    `echo 'echo HOOK-RAN' > ${root}/.git/hooks/pre-commit && echo PLANTED-HOOK`,
    `chmod +x ${root}/.git/hooks/pre-commit 2>/dev/null`,
    `git -C ${root} config core.hooksPath /tmp/elsewhere && echo WROTE-CONFIG`,
    `mv ${root}/.git ${root}/moved-git && echo MOVED-GIT`,
    `mv ${root}/.git/hooks ${root}/.git/old-hooks && echo MOVED-HOOKS`,
  ].join('; ')

describe('protected paths', () => {
  it('bubblewrap: hooks and config are neither writable, creatable nor reachable by renaming; git commit works', async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await sandboxFor('bubblewrap')
    try {
      // Control: the same plant, unconfined, in a repo of its own.
      const victim = gitRepo('git-control')
      const control = await runSpec(sh(PLANT(victim), victim))
      expect(control.stdout).toContain('PLANTED-HOOK')
      expect(control.stdout).toContain('WROTE-CONFIG')
      expect(control.stdout).toContain('MOVED-GIT')

      const root = gitRepo('git-bwrap')
      const policy: SandboxExecutionPolicy = { mode: 'workspace-write', workspaceRoot: root }
      const c = sandbox.confine(sh(PLANT(root), root), policy)
      expect(c.enforcement).toBe('full')
      expect(c.plan?.account.classes.protected?.governed).toBe(true)
      const r = await runSpec(c.spec)
      expect(r.stdout).toBe('')
      expect(fs.existsSync(path.join(root, '.git', 'hooks', 'pre-commit'))).toBe(false)
      expect(fs.readFileSync(path.join(root, '.git', 'config'), 'utf8')).not.toContain('hooksPath')
      // Everyday git still works inside.
      const commit = sandbox.confine(
        sh(
          'echo hi > f && git add f && git -c user.name=t -c user.email=t@e commit -q -m f && git log --oneline | wc -l',
          root,
        ),
        policy,
      )
      const done = await runSpec(commit.spec)
      expect(done.stdout.trim()).toBe('2')
    } finally {
      await sandbox.dispose()
    }
  })

  it('bubblewrap: a missing hooks dir cannot be created', async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await sandboxFor('bubblewrap')
    try {
      const root = gitRepo('git-nohooks')
      fs.rmSync(path.join(root, '.git', 'hooks'), { recursive: true })
      const c = sandbox.confine(
        sh(`mkdir -p ${root}/.git/hooks; echo x > ${root}/.git/hooks/post-checkout && echo PLANTED`, root),
        { mode: 'workspace-write', workspaceRoot: root },
      )
      const r = await runSpec(c.spec)
      expect(r.stdout).toBe('')
      expect(fs.readdirSync(path.join(root, '.git', 'hooks'))).toEqual([])
    } finally {
      await sandbox.dispose()
    }
  })

  it('Landlock: partial naming the hooks and config; requireEnforcement full fails closed; the chain prefers bubblewrap', async (ctx) => {
    await need(ctx, 'landlock')
    const root = gitRepo('git-landlock')
    const only = await sandboxFor('landlock')
    try {
      const c = only.confine(sh('true', root), { mode: 'workspace-write', workspaceRoot: root })
      expect(c.enforcement).toBe('partial')
      expect(c.plan?.account.ungoverned).toContain('protected')
      expect(c.plan?.account.classes.protected?.how).toContain(path.join(root, '.git', 'hooks'))
      expect(() =>
        only.confine(sh('true', root), { mode: 'workspace-write', workspaceRoot: root, requireEnforcement: 'full' }),
      ).toThrow(/full enforcement/)
      // Outside a git checkout nothing is protected, and Landlock's workspace-write keeps its own verdict.
      const plain = workspace('not-git')
      expect(only.plan({ mode: 'workspace-write', workspaceRoot: plain })?.account.ungoverned).not.toContain(
        'protected',
      )
    } finally {
      await only.dispose()
    }
    await need(ctx, 'bubblewrap')
    const chain = await LocalSandbox.create({ env })
    try {
      expect(chain.confine(sh('true', root), { mode: 'workspace-write', workspaceRoot: root }).backend).toBe(
        'bubblewrap',
      )
    } finally {
      await chain.dispose()
    }
  })

  it('relative protected paths resolve against the workspace root', async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await sandboxFor('bubblewrap')
    const root = workspace('ws-relative')
    fs.mkdirSync(path.join(root, 'ci'))
    fs.writeFileSync(path.join(root, 'ci', 'deploy.sh'), 'echo deploy')
    try {
      const c = sandbox.confine(sh('echo evil > ci/deploy.sh && echo WROTE; echo ok > other && echo OTHER', root), {
        mode: 'workspace-write',
        workspaceRoot: root,
        protectedPaths: ['ci'],
      })
      const r = await runSpec(c.spec)
      expect(r.stdout).toBe('OTHER\n')
      expect(fs.readFileSync(path.join(root, 'ci', 'deploy.sh'), 'utf8')).toBe('echo deploy')
    } finally {
      await sandbox.dispose()
    }
  })
})

describe.each(['landlock', 'bubblewrap'] as const)("other sessions' dirs [%s]", (backend) => {
  it("session B reads neither A's temp nor A's spill files; each reads its own spill", async (ctx) => {
    await need(ctx, backend)
    const sandbox = await sandboxFor(backend)
    const root = workspace(`ws-sessions-${backend}`)
    try {
      const a = sandbox.confine(sh('echo A-TEMP > "$TMPDIR/a"', root), {
        mode: 'read-only',
        workspaceRoot: root,
        sessionId: 'A',
      })
      expect((await runSpec(a.spec)).exitCode).toBe(0)
      fs.writeFileSync(path.join(a.spillDir!, 'cordon-1-1-stdout.log'), 'A-SPILL')
      const aTemp = path.join(a.tempDir!, 'a')
      const aSpill = path.join(a.spillDir!, 'cordon-1-1-stdout.log')
      const script = `cat ${aTemp} ${aSpill} 2>/dev/null; ls ${a.tempDir} 2>/dev/null | grep -q a && echo LISTED`
      const control = await runSpec(sh(script, root))
      expect(control.stdout).toContain('A-TEMP')
      expect(control.stdout).toContain('A-SPILL')
      const b = sandbox.confine(sh(script, root), { mode: 'read-only', workspaceRoot: root, sessionId: 'B' })
      // Landlock leaves names listable (read-view.ts); bubblewrap shows an empty dir.
      expect((await runSpec(b.spec)).stdout).toBe(backend === 'landlock' ? 'LISTED\n' : '')
      const own = sandbox.confine(sh(`cat ${aSpill}`, root), { mode: 'read-only', workspaceRoot: root, sessionId: 'A' })
      expect((await runSpec(own.spec)).stdout).toBe('A-SPILL')
    } finally {
      await sandbox.dispose()
    }
  })
})

describe('host agent sockets', () => {
  let server: net.Server
  const sock = env.SSH_AUTH_SOCK
  beforeAll(async () => {
    server = net.createServer((c) => {
      c.on('error', () => {}) // a client that closes without reading resets the connection
      c.end('AGENT\n')
    })
    await new Promise<void>((r) => server.listen(sock, r))
    fs.chmodSync(sock, 0o777)
  })
  afterAll(() => server.close())
  const connect = `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONNECTED')" ${sock} 2>/dev/null`

  it.for([
    ['bubblewrap', 'inherit'],
    ['bubblewrap', 'deny'],
    ['landlock', 'deny'],
  ] as const)('%s, network %s: the agent socket is unreachable', async ([backend, network], ctx) => {
    await need(ctx, backend)
    const sandbox = await sandboxFor(backend)
    const root = workspace(`ws-sock-${backend}-${network}`)
    try {
      expect((await runSpec(sh(connect, root))).stdout).toBe('CONNECTED\n')
      const c = sandbox.confine(sh(connect, root), { mode: 'workspace-write', workspaceRoot: root, network })
      expect((await runSpec(c.spec)).stdout).toBe('')
    } finally {
      await sandbox.dispose()
    }
  })

  it('bubblewrap keeps a socket the policy allows', async (ctx) => {
    await need(ctx, 'bubblewrap')
    const sandbox = await sandboxFor('bubblewrap')
    const root = workspace('ws-sock-allow')
    try {
      const c = sandbox.confine(sh(connect, root), { mode: 'read-only', workspaceRoot: root, allowUnixSockets: [sock] })
      expect((await runSpec(c.spec)).stdout).toBe('CONNECTED\n')
    } finally {
      await sandbox.dispose()
    }
  })

  it('Landlock with network inherit says the host sockets stay reachable', async (ctx) => {
    await need(ctx, 'landlock')
    const sandbox = await sandboxFor('landlock')
    try {
      expect(sandbox.capabilities.backends.landlock?.limitations.join('\n')).toMatch(/unix sockets/)
    } finally {
      await sandbox.dispose()
    }
  })
})

describe('as uid 65534, through the CLI', () => {
  const bin = path.join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
  const asNobody = (args: string[]) =>
    spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, bin, ...args], {
      cwd: base,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH, HOME: home },
    })

  it.for(['landlock', 'bubblewrap'] as const)(
    '%s: the hidden key stays unreadable; the control reads it',
    async (backend, ctx) => {
      if (process.getuid?.() !== 0) ctx.skip('needs root to drop to uid 65534 with setpriv')
      await need(ctx, backend)
      const script = readAll(HIDDEN_FILES)
      const control = asNobody(['run', '--mode', 'danger-full-access', '--', 'bash', '-c', script])
      expect(control.stdout.match(/SECRET-READ/g)).toHaveLength(HIDDEN_FILES.length)
      const r = asNobody(['run', '--backend', backend, '--', 'bash', '-c', `${script}; echo DONE`])
      expect(r.stderr).not.toMatch(/SANDBOX_UNAVAILABLE|unavailable/i)
      expect(r.stdout).toBe('DONE\n')
    },
  )
})
