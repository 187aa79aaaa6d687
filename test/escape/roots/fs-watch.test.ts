// File-notification watches on a hidden place. Landlock has no hook for inotify or fanotify: a
// command that could not open a hidden directory could still watch it and read the names of what
// the host opens or makes there, and when. Under read-only on Landlock seccomp refuses the watch;
// bubblewrap's mask leaves nothing to watch; Landlock's workspace-write keeps watches (file
// watchers need them) and its account says secrets are not governed. Each case has its control:
// the same watcher, unconfined and as the same user, sees the host open the hidden file.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import type { AttackUser } from '../attacks/attack.js'
import { PYTHON } from '../host/host-objects.js'
import { NOBODY, REPO, USERS } from '../host/run-as.js'

const CLI = path.join(REPO, 'bin', 'cordon.js')

// Watches argv[1] (inotify), prints "watching", then the names of the events it gets within 3 s.
const WATCHER = `
import ctypes, os, select, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
wd = libc.inotify_add_watch(fd, sys.argv[1].encode(), 0xfff)
print("watching" if wd >= 0 else "refused " + os.strerror(ctypes.get_errno()), flush=True)
names = []
if wd >= 0 and select.select([fd], [], [], 3)[0]:
    data, i = os.read(fd, 4096), 0
    while i < len(data):
        n = struct.unpack_from("iIII", data, i)[3]
        names.append(data[i + 16:i + 16 + n].rstrip(b"\\0").decode())
        i += 16 + n
print("events " + ",".join(names), flush=True)
`

// The same through dnotify: fcntl(F_NOTIFY) on the hidden dir opened O_RDONLY (Landlock grants
// READ_DIR everywhere, so it opens); prints "watching", then "fired" when a signal came within 3 s.
const DNOTIFY_WATCHER = `
import fcntl, os, signal, sys, time
fired = []
signal.signal(signal.SIGIO, lambda *a: fired.append(1))
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
    fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
except OSError as e:
    print("refused " + e.strerror, flush=True)
    sys.exit(0)
print("watching", flush=True)
end = time.time() + 3
while not fired and time.time() < end:
    time.sleep(0.05)
print("events " + ("key" if fired else ""), flush=True)
`

const WATCH_KINDS = ['inotify', 'dnotify'] as const
const MODES = ['read-only', 'workspace-write'] as const
const watcherOf = (l: Layout, kind: (typeof WATCH_KINDS)[number]) =>
  kind === 'inotify' ? l.watcher : path.join(l.base, 'dnotify.py')

interface Layout {
  base: string
  root: string
  hidden: string
  watcher: string
}

/** A workspace, a hidden dir beside it holding `key`, and the watcher: all `user`'s. */
function layout(user: AttackUser, name: string): Layout {
  const base = path.join(scratchDir(`cordon-fs-watch-${user}`), name)
  const root = path.join(base, 'ws')
  const hidden = path.join(base, 'secret')
  fs.mkdirSync(root, { recursive: true })
  fs.mkdirSync(hidden)
  fs.writeFileSync(path.join(hidden, 'key'), 'the secret\n')
  const watcher = path.join(base, 'watch.py')
  fs.writeFileSync(watcher, WATCHER)
  fs.writeFileSync(path.join(base, 'dnotify.py'), DNOTIFY_WATCHER)
  if (user === 'nobody') {
    fs.chmodSync(path.dirname(base), 0o755)
    expect(spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, base]).status).toBe(0)
  }
  return { base, root, hidden, watcher }
}

const asUser = (user: AttackUser, argv: string[]) =>
  user === 'root' ? argv : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...argv]

/** Runs `argv` as `user`; once it says "watching", the host opens the hidden file; its whole output. */
function watchWhileHostReads(user: AttackUser, l: Layout, argv: string[]): Promise<string> {
  const run = asUser(user, argv)
  const child = spawn(run[0]!, run.slice(1), {
    cwd: l.root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: l.base },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  })
  let out = ''
  let touched = false
  const onData = (c: Buffer) => {
    out += c.toString('utf8')
    if (!touched && out.includes('watching')) {
      touched = true
      fs.readFileSync(path.join(l.hidden, 'key'))
    }
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  return new Promise((resolve) => child.on('close', () => resolve(out)))
}

/** The names the watcher reported, or undefined when it could not watch. */
function seen(output: string): string[] | undefined {
  const line = output.split('\n').find((l) => l.startsWith('events '))
  if (line === undefined || !output.includes('watching')) return undefined
  return line.slice('events '.length).split(',').filter(Boolean)
}

const needsRoot = process.getuid?.() !== 0
for (const user of USERS) {
  const skip = user === 'nobody' && needsRoot
  describe.skipIf(skip)(
    `watching a hidden dir as ${user}${skip ? ' (skipped: needs a root test process)' : ''}`,
    () => {
      for (const kind of WATCH_KINDS) {
        it(`control: unconfined, the ${kind} watcher sees the host open the hidden file`, async () => {
          const l = layout(user, `control-${kind}`)
          const output = await watchWhileHostReads(user, l, [PYTHON, watcherOf(l, kind), l.hidden])
          expect(seen(output), output).toContain('key')
        })
      }

      for (const backend of TEST_BACKENDS) {
        for (const [mode, kind] of MODES.flatMap((m) => WATCH_KINDS.map((k) => [m, k] as const))) {
          it(`${backend}, ${mode}, ${kind}: the watch sees nothing of the hidden dir, or the account says it can`, async (ctx) => {
            await needBackend(ctx, backend)
            const l = layout(user, `${backend}-${mode}-${kind}`)
            const cli = [process.execPath, CLI, 'run', '--backend', backend, '--mode', mode, '--root', l.root]
            const output = await watchWhileHostReads(user, l, [
              ...cli,
              '--hide',
              l.hidden,
              '--',
              PYTHON,
              watcherOf(l, kind),
              l.hidden,
            ])
            expect(output, 'reach: the watcher ran').toMatch(/watching|refused/)
            const names = seen(output)
            if (backend === 'landlock' && mode === 'workspace-write') {
              // Kept for file watchers: the claim is the account naming it.
              expect(names, 'the control proves this would see the file').toContain('key')
              const secrets = await secretsVerdict(backend, mode, l)
              expect(secrets.governed).toBe(false)
              expect(secrets.how).toMatch(/inotify, fanotify and dnotify/)
              return
            }
            expect(names ?? [], `BREAK under ${backend} ${mode}:\n${output}`).not.toContain('key')
            if (backend === 'landlock') expect(output).toMatch(/refused Operation not permitted/)
          }, 120_000)
        }
      }
    },
  )
}

/** The account's verdict on the secrets class for this layout. */
async function secretsVerdict(
  backend: SandboxBackendName,
  mode: 'read-only' | 'workspace-write',
  l: Layout,
): Promise<{ governed: boolean; how: string }> {
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  try {
    const c = sandbox.confine(
      {
        argv: ['/bin/true'],
        cwd: l.root,
        graceMs: 500,
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
      },
      {
        mode,
        workspaceRoot: l.root,
        hiddenPaths: [l.hidden],
        ...(mode === 'workspace-write' ? { sessionId: 'w' } : {}),
      },
    )
    const verdict = c.plan?.account.classes.secrets
    if (verdict === undefined) throw new Error('no secrets verdict in the plan')
    return verdict as { governed: boolean; how: string }
  } finally {
    await sandbox.dispose()
  }
}

// The same class without a watch: stat of a name known inside a hidden dir (readlink and getxattr
// go the same way). Landlock has no right for them (its account and limitations say so);
// bubblewrap's mask leaves nothing there.
for (const user of USERS) {
  const skip = user === 'nobody' && needsRoot
  describe.skipIf(skip)(
    `stat of a known name in a hidden dir as ${user}${skip ? ' (skipped: needs a root test process)' : ''}`,
    () => {
      const statArgv = (l: Layout) => ['stat', '-c', 'size=%s', path.join(l.hidden, 'key')]
      const run = (user: AttackUser, l: Layout, argv: string[]) => {
        const a = asUser(user, argv)
        const r = spawnSync(a[0]!, a.slice(1), {
          cwd: l.root,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: l.base },
          encoding: 'utf8',
          timeout: 60_000,
        })
        return `${r.stdout}${r.stderr}`
      }

      it('control: unconfined, stat shows the hidden file and its size', () => {
        const l = layout(user, 'stat-control')
        expect(run(user, l, statArgv(l))).toContain('size=11')
      })

      for (const backend of TEST_BACKENDS) {
        it(`${backend}, read-only: nothing shows, or the account says it does`, async (ctx) => {
          await needBackend(ctx, backend)
          const l = layout(user, `stat-${backend}`)
          const cli = [process.execPath, CLI, 'run', '--backend', backend, '--root', l.root, '--hide', l.hidden, '--']
          const output = run(user, l, [...cli, ...statArgv(l)])
          expect(output, 'reach: stat ran').toMatch(/size=|No such file|Permission denied/)
          if (backend === 'landlock') {
            // No Landlock right covers stat: the claim is the account naming it.
            expect(output, 'the control proves this shows the size').toContain('size=11')
            const secrets = await secretsVerdict(backend, 'read-only', l)
            expect(secrets.how).toMatch(/still answers stat, readlink and getxattr/)
            const sandbox = await LocalSandbox.create({ backends: [backend] })
            const limits = sandbox.capabilities.backends.landlock?.limitations ?? []
            await sandbox.dispose()
            expect(limits.join('\n')).toMatch(/stat, access, readlink and getxattr are not Landlock rights/)
            return
          }
          expect(output, `BREAK under ${backend}:\n${output}`).not.toContain('size=')
        }, 120_000)
      }
    },
  )
}
