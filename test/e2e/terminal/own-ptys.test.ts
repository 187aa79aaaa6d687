// Tools that allocate ptys of their own (script, tmux, expect, Python's pty) under confinement:
// bubblewrap gives each run a /dev/pts of its own, so they work there, take the pty as their
// controlling terminal, and still cannot inject into it (TIOCSTI) or see a host pty; Landlock
// shares the host's /dev/pts and keeps it closed (its limitations say so). Each claim has its
// unconfined control.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const root = fs.realpathSync(scratchDir('cordon-own-ptys'))
fs.chmodSync(root, 0o755)
const sh = (script: string) => specFor(['bash', '-c', script], root, { PATH: process.env.PATH })
const SCRIPT_TTY = "script -qec 'tty; echo own-pty-ok' /dev/null"
// Python's pty.fork: openpty, fork, setsid and TIOCSCTTY in the child.
const PY_FORK = `python3 -c "
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    print('child on', os.ttyname(0)); sys.stdout.flush(); os._exit(0)
out = b''
while True:
    try:
        chunk = os.read(fd, 100)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0); print(out.decode().strip())"`
const PY_STI = `python3 -c "
import fcntl, pty, termios
m, s = pty.openpty()
try:
    fcntl.ioctl(s, termios.TIOCSTI, b'x'); print('TIOCSTI worked')
except OSError as e:
    print('TIOCSTI refused', e.errno)"`

async function confined(backend: SandboxBackendName, mode: 'read-only' | 'workspace-write', script: string) {
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  try {
    const c = sandbox.confine(sh(script), { mode, workspaceRoot: root })
    expect(c.backend).toBe(backend)
    return { ...(await runSpec(c.spec)), limitations: sandbox.capabilities.backends[backend]?.limitations ?? [] }
  } finally {
    await sandbox.dispose()
  }
}

// A host pty held open for the whole file: what a confined command must not reach by path.
let holder: ChildProcess | undefined
let hostPty = ''
beforeAll(async () => {
  holder = spawn(
    'python3',
    ['-c', 'import os, pty, time\nm, s = pty.openpty()\nprint(os.ttyname(s), flush=True)\ntime.sleep(120)'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  hostPty = await new Promise<string>((resolve) => holder?.stdout?.once('data', (d) => resolve(String(d).trim())))
})
afterAll(() => {
  holder?.kill('SIGKILL')
  fs.rmSync(root, { recursive: true, force: true })
})

describe('own ptys under bubblewrap', () => {
  const need = (ctx: TestContext) => needBackend(ctx, 'bubblewrap')

  it('control: unconfined, script gets a pty, pty.fork works, TIOCSTI works (legacy_tiocsti=1), the host pty is there', async () => {
    expect((await runSpec(sh(SCRIPT_TTY))).stdout).toMatch(/^\/dev\/pts\/\d+\r?\nown-pty-ok/)
    expect((await runSpec(sh(PY_FORK))).stdout).toMatch(/child on \/dev\/pts\/\d+/)
    expect((await runSpec(sh(PY_STI))).stdout).toBe('TIOCSTI worked\n')
    expect(hostPty).toMatch(/^\/dev\/pts\/\d+$/)
    expect((await runSpec(sh(`test -e ${hostPty} && echo visible`))).stdout).toBe('visible\n')
  })

  for (const mode of ['read-only', 'workspace-write'] as const) {
    it(`${mode}: script and pty.fork get ptys of the run's own; TIOCSTI stays refused; no host pty is visible`, async (ctx) => {
      await need(ctx)
      const s = await confined('bubblewrap', mode, SCRIPT_TTY)
      expect(s.stdout, s.stderr).toMatch(/^\/dev\/pts\/\d+\r?\nown-pty-ok/)
      expect((await confined('bubblewrap', mode, PY_FORK)).stdout).toMatch(/child on \/dev\/pts\/\d+/)
      expect((await confined('bubblewrap', mode, PY_STI)).stdout).toBe('TIOCSTI refused 1\n')
      const seen = await confined('bubblewrap', mode, `ls /dev/pts; test -e ${hostPty} && echo visible || echo absent`)
      expect(seen.stdout.trim().split('\n').pop()).toBe('absent')
      expect(s.limitations.join('\n')).toMatch(/ptys are private/)
    })
  }

  it('as uid 65534 through the CLI: tmux starts a session on its own pty', async (ctx) => {
    await need(ctx)
    const r = spawnSync(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        path.resolve('bin/cordon.js'),
        'run',
        '--backend',
        'bubblewrap',
        '--',
        'bash',
        '-c',
        // tmux runs the pane through $SHELL, else the account's shell (nologin for uid 65534).
        'export SHELL=/bin/sh; tmux -S "$TMPDIR/s" new-session -d "tty > \\$TMPDIR/o"; for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$TMPDIR/o" ] && break; sleep 0.2; done; cat "$TMPDIR/o"; tmux -S "$TMPDIR/s" kill-server 2>/dev/null; true',
      ],
      { cwd: root, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH } },
    )
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^\/dev\/pts\/\d+$/m)
  })
})

describe('the rule on a private /dev/pts', () => {
  it("cordon-exec refuses it on the host's own devpts (control: named as another device, the rule goes in)", () => {
    const helper = path.resolve('build/Release/cordon-exec')
    if (!fs.existsSync(helper)) throw new Error(`${helper} is not built`)
    const hostDev = fs.statSync('/dev/pts').dev
    // A domain handling only WRITE_FILE (0x2), so that /bin/echo still runs when the rule is accepted.
    const init = (dev: number) =>
      spawnSync(helper, ['init', '--landlock', '2:0:0:24', '--rule-devpts', `2:${dev}`, '--', '/bin/echo', 'ran'], {
        encoding: 'utf8',
      })
    const refused = init(hostDev)
    expect([refused.status, refused.stdout]).toEqual([125, ''])
    expect(refused.stderr).toMatch(/did not start \(landlock: Operation not permitted\)/)
    const control = init(hostDev + 1)
    expect([control.status, control.stdout]).toEqual([0, 'ran\n'])
  })
})

describe('own ptys under Landlock', () => {
  it('are refused (the host /dev/pts stays closed), and the limitations say so and point to bubblewrap', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const r = await confined('landlock', 'workspace-write', SCRIPT_TTY)
    expect(r.exitCode).not.toBe(0)
    expect(r.stderr).toMatch(/failed to create pseudo-terminal: Permission denied/)
    expect(r.limitations.join('\n')).toMatch(/own ptys.*bubblewrap gives each run a \/dev\/pts of its own/)
  })
})
