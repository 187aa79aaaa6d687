// Confined terminals: LocalSandbox.confineTerminal + spawnTerminal on real ptys (node-pty), the
// real kernel (Landlock, seccomp) and real bwrap. Each confinement claim is an attack that fails
// in the confined terminal and succeeds in a danger-full-access one through the same path.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, closeSync, existsSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { isInvalidRequestError, isSandboxUnavailableError, isSpawnError } from '../../../src/policy/errors.js'
import type { SandboxMode } from '../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { helperPath } from '../../../src/subprocess/native.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessTerminalHandle, SubprocessTerminalSpawnSpec } from '../../../src/subprocess/types.js'
import { alive, eventually } from '../../support/subprocess/processes.js'
import { scratchDir } from '../../support/scratch.js'
import { describeConfinedTerminals, Screen, until } from '../../support/subprocess/terminal.js'

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-cterm') })
afterAll(() => runtime.dispose())
const opened: SubprocessTerminalHandle[] = []
afterEach(() => Promise.all(opened.splice(0).map((t) => t.terminate())).then(() => undefined))

const dist = join(import.meta.dirname, '..', '..', '..', 'dist', 'index.js')
const BASH = ['bash', '--norc', '--noprofile', '-i']
const BASH_ENV = { PS1: 'PROMPT$ ', HISTFILE: '/dev/null', INPUTRC: '/dev/null', TERM: 'dumb' }
const PROMPT = /PROMPT\$ $/
const CONFINED: readonly SandboxMode[] = ['read-only', 'workspace-write']

/** Pushes "hello\n" into its own terminal's input with TIOCSTI and says whether the kernel let it. */
const INJECT = [
  'import fcntl, termios',
  'try:',
  "    [fcntl.ioctl(0, termios.TIOCSTI, bytes([c])) for c in b'hello\\n']",
  "    print('INJECTED')",
  'except OSError as e:',
  "    print('REFUSED', e.errno)",
].join('\n')

function termSpec(
  argv: readonly string[],
  cwd: string,
  extra: Partial<SubprocessTerminalSpawnSpec> = {},
): SubprocessTerminalSpawnSpec {
  return { argv, cwd, cols: 80, rows: 24, graceMs: 1000, ...extra }
}

/** Confines `spec` to `mode` over `root` and starts it; danger-full-access is the unconfined control. */
async function open(sandbox: LocalSandbox, mode: SandboxMode, root: string, spec: SubprocessTerminalSpawnSpec) {
  const confined = sandbox.confineTerminal(spec, { mode, workspaceRoot: root })
  const terminal = await runtime.spawnTerminal(confined.spec)
  opened.push(terminal)
  return { terminal, screen: new Screen(terminal), confined }
}

/** Types `line` + Enter and returns what was printed up to the next prompt. */
async function command(t: { terminal: SubprocessTerminalHandle; screen: Screen }, line: string): Promise<string> {
  const from = t.screen.mark()
  t.terminal.write(`${line}\r`)
  await t.screen.waitFor(PROMPT, 10_000, from + line.length)
  return t.screen.text.slice(from)
}

/** The members of a terminal's session as the provider sees them (pids in the host's view). */
function members(terminal: SubprocessTerminalHandle): number[] {
  return (terminal as unknown as { members(): { pid: number }[] }).members().map((m) => m.pid)
}

describe('confineTerminal at the boundary (no pty needed)', () => {
  it('fails closed with SANDBOX_UNAVAILABLE when no backend can enforce the mode; danger-full-access asks none', async () => {
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], programs: { bwrap: '/nonexistent/bwrap' } })
    try {
      const root = scratchDir('cordon-cterm-closed')
      const spec = termSpec(['/bin/true'], root)
      for (const mode of CONFINED) {
        const error = thrown(() => sandbox.confineTerminal(spec, { mode, workspaceRoot: root }))
        expect(isSandboxUnavailableError(error), `${mode}: ${String(error)}`).toBe(true)
        expect((error as Error).message).toMatch(/refusing to run the command unconfined/)
      }
      expect(sandbox.confineTerminal(spec, { mode: 'danger-full-access', workspaceRoot: root })).toEqual({
        spec,
        backend: 'none',
      })
    } finally {
      await sandbox.dispose()
    }
  })

  it('a bad spec is an InvalidRequestError naming every field, before any backend is asked', async () => {
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], programs: { bwrap: '/nonexistent/bwrap' } })
    try {
      const root = scratchDir('cordon-cterm-bad')
      const bad = thrown(() =>
        sandbox.confineTerminal(
          { argv: [], cwd: 'rel', cols: 0, rows: 1, graceMs: 0 },
          { mode: 'read-only', workspaceRoot: root },
        ),
      )
      expect(isInvalidRequestError(bad)).toBe(true)
      const issues = (bad as { issues: string[] }).issues.join('\n')
      for (const field of ['argv', 'cwd', 'cols', 'graceMs']) expect(issues).toMatch(field)
    } finally {
      await sandbox.dispose()
    }
  })
})

await describeConfinedTerminals('confined terminals', (backend, sandbox) => {
  it('the spec: cordon-exec init --terminal with the plan on argv (Landlock: its ruleset as a handed-over fd), the session TMPDIR, launcher set', () => {
    const root = scratchDir('cordon-cterm-spec')
    const c = sandbox().confineTerminal(termSpec(['bash', '-i'], root, { env: { FOO: 'bar' } }), {
      mode: 'workspace-write',
      workspaceRoot: root,
    })
    expect(c.backend).toBe(backend)
    expect(c.enforcement).toBe(c.plan?.account.enforcement)
    expect(c.spec.launcher).toBe(true)
    expect(c.spec.env).toEqual({ ...c.plan?.env, FOO: 'bar', TMPDIR: c.tempDir })
    const argv = c.spec.argv
    const init = argv.indexOf(helperPath()!)
    expect(init).toBeGreaterThanOrEqual(0)
    const launcher = argv.slice(init, argv.lastIndexOf('--'))
    for (const flag of ['init', '--terminal', '--no-new-privs', '--drop-caps', '--seccomp-hex'])
      expect(launcher).toContain(flag)
    expect(launcher).not.toContain('--status-fd') // node-pty passes only the pty
    if (backend === 'bubblewrap') {
      // Rules, checked inside against their inodes, with the one on the sandbox's own /dev/pts.
      for (const flag of ['--landlock', '--rule', '--rule-devpts']) expect(launcher).toContain(flag)
      expect(c.spec.ruleset).toBeUndefined()
    } else {
      // A ruleset the host builds per spawn, inherited by node-pty's fork (spawnTerminal names it).
      expect(launcher).not.toContain('--rule')
      expect(launcher[launcher.indexOf('--ruleset-fd') + 1]).toBe('@ruleset')
      expect(c.spec.ruleset?.closed).toBe(false)
      // Each call builds a new ruleset object: no two spawns (nor anything else) share one.
      const [a, b] = [c.spec.ruleset!.fresh(), c.spec.ruleset!.fresh()]
      expect(a).not.toBe(b)
      for (const fd of [a, b]) closeSync(fd)
    }
    expect(argv.slice(argv.lastIndexOf('--') + 1)).toEqual([expect.stringMatching(/^\/.*\/bash$/), '-i'])
    if (backend === 'bubblewrap') {
      expect(argv[0]).toBe(sandbox().capabilities.backends.bubblewrap?.executable)
      expect(argv.slice(0, init)).not.toContain('--new-session') // job control needs the terminal's session
      expect(argv.slice(0, init)).not.toContain('--json-status-fd')
    } else {
      expect(init).toBe(0)
      expect(launcher).toContain('--host-pid')
    }
  })

  it('a program missing from the PATH the terminal will see is a SpawnError at exec, before anything runs', () => {
    const root = scratchDir('cordon-cterm-missing')
    const missing = thrown(() =>
      sandbox().confineTerminal(termSpec(['cordon-no-such-program'], root), { mode: 'read-only', workspaceRoot: root }),
    )
    expect(isSpawnError(missing) && missing.stage === 'exec' && missing.code === 'ENOENT').toBe(true)
  })

  it('a confined bash: job control (sleep 100 &, fg, Ctrl-Z, Ctrl-C), resize (SIGWINCH, stty size), exit status', async () => {
    const root = scratchDir('cordon-cterm-bash')
    const t = await open(sandbox(), 'workspace-write', root, termSpec(BASH, root, { env: BASH_ENV }))
    expect(t.confined.backend).toBe(backend)
    await t.screen.waitFor(PROMPT)
    const prompt = await until(
      () => t.terminal.inspectForeground(),
      (f) => f?.waitingForInput === true,
    )
    expect(prompt).toMatchObject({ programGroup: true, command: 'bash' })
    expect(prompt?.pid).not.toBe(t.terminal.pid) // the supervisor (or bwrap) leads the session
    expect(String((await t.terminal.signalForeground('SIGKILL').catch((e: unknown) => e)) as Error)).toMatch(
      /refusing to SIGKILL the program's own group/,
    )
    // A background job brought to the foreground, then interrupted: the job dies, the shell stays.
    expect(await command(t, 'sleep 100 &')).toMatch(/\[1\] \d+/)
    t.terminal.write('fg\r')
    const job = await until(
      () => t.terminal.inspectForeground(),
      (f) => f?.command === 'sleep',
    )
    expect(job).toMatchObject({ command: 'sleep', argv: ['sleep', '100'], programGroup: false })
    t.terminal.write('\x03')
    expect(await eventually(() => !alive(job!.pid))).toBe(true)
    await t.screen.waitFor(PROMPT)
    expect(await command(t, 'echo "status $?"')).toContain('status 130\r\n')
    // Ctrl-Z stops a foreground job; fg brings it back; Ctrl-C ends it.
    t.terminal.write('sleep 100\r')
    const stopped = await until(
      () => t.terminal.inspectForeground(),
      (f) => f?.command === 'sleep',
    )
    t.terminal.write('\x1a')
    await t.screen.waitFor(/Stopped\s+sleep 100/)
    await t.screen.waitFor(PROMPT)
    expect(await command(t, 'jobs')).toMatch(/\[1\]\+\s+Stopped\s+sleep 100/)
    t.terminal.write('fg\r')
    await until(
      () => t.terminal.inspectForeground(),
      (f) => f?.pgid === stopped?.pgid,
    )
    t.terminal.write('\x03')
    expect(await eventually(() => !alive(stopped!.pid))).toBe(true)
    await t.screen.waitFor(PROMPT)
    // The window's size and its changes reach the program.
    expect(await command(t, 'stty size')).toContain('24 80')
    await command(t, "trap 'echo WINCH' WINCH")
    // The trap's own output, not the echo of the trap command typed above.
    const winch = t.screen.mark()
    t.terminal.resize(120, 40)
    await t.screen.waitFor('WINCH\r\n', 10_000, winch)
    expect(await command(t, 'stty size')).toContain('40 120')
    t.terminal.write('exit 7\r')
    expect(await t.terminal.done).toEqual({ exitCode: 7, signal: null })
    expect(await eventually(() => members(t.terminal).length === 0)).toBe(true)
  })

  it('death by signal is reported (Landlock: the signal; bubblewrap: 128+N from the sandbox’s pid 1)', async () => {
    const root = scratchDir('cordon-cterm-signal')
    const t = await open(sandbox(), 'read-only', root, termSpec(['sh', '-c', 'kill -USR1 $$'], root))
    expect(await t.terminal.done).toEqual(
      backend === 'landlock' ? { exitCode: null, signal: 'SIGUSR1' } : { exitCode: 138, signal: null },
    )
  })

  it.each(CONFINED)(
    'TIOCSTI into its own terminal is refused under %s; the same injection works unconfined',
    async (mode) => {
      const root = scratchDir('cordon-cterm-sti')
      const argv = ['bash', '-c', `python3 -c "${INJECT}"; read -r -t 1 line; echo "got:[$line]"`]
      const control = await open(sandbox(), 'danger-full-access', root, termSpec(argv, root))
      expect(control.confined.backend).toBe('none')
      await control.terminal.done
      expect(control.screen.text).toContain('INJECTED')
      expect(control.screen.text).toContain('got:[hello]')
      const confined = await open(sandbox(), mode, root, termSpec(argv, root))
      expect(confined.confined.backend).toBe(backend)
      await confined.terminal.done
      expect(confined.screen.text).toContain('REFUSED 1\r\n') // EPERM, from seccomp
      expect(confined.screen.text).toContain('got:[]')
      expect(confined.screen.text).not.toContain('hello')
    },
  )

  it('another terminal of the host cannot be opened; a pty can be allocated only under bubblewrap (its own /dev/pts); unconfined, both can', async () => {
    const root = scratchDir('cordon-cterm-pts')
    const other = await open(sandbox(), 'danger-full-access', root, termSpec(['sh', '-c', 'tty; sleep 30'], root))
    const pts = (await other.screen.waitFor(/(\/dev\/pts\/\d+)\r\n/))[1]!
    const probe = [
      'import os, sys',
      'for path in (sys.argv[1], "/dev/ptmx"):',
      '    try:',
      '        os.close(os.open(path, os.O_RDWR | os.O_NOCTTY))',
      '        print(path, "OPENED")',
      '    except OSError as e:',
      '        print(path, "REFUSED", e.errno)',
    ].join('\n')
    const argv = ['python3', '-c', probe, pts]
    const control = await open(sandbox(), 'danger-full-access', root, termSpec(argv, root))
    await control.terminal.done
    expect(control.screen.text).toContain(`${pts} OPENED`)
    expect(control.screen.text).toContain('/dev/ptmx OPENED')
    const confined = await open(sandbox(), 'workspace-write', root, termSpec(argv, root))
    await confined.terminal.done
    // Landlock: /dev is closed (EACCES), ptmx included. bubblewrap: a private /dev/pts without the
    // host's ptys (ENOENT), whose ptmx makes ptys of the run's own (tmux, script, expect).
    expect(confined.screen.text).toMatch(new RegExp(`${pts} REFUSED (13|2)\\r\\n`))
    expect(confined.screen.text).toContain(backend === 'bubblewrap' ? '/dev/ptmx OPENED' : '/dev/ptmx REFUSED 13\r\n')
  })

  it.each(CONFINED)(
    'a write outside the root fails under %s (inside only under workspace-write); danger-full-access writes it',
    async (mode) => {
      const root = scratchDir('cordon-cterm-root')
      const outside = scratchDir('cordon-cterm-outside')
      const script = (tag: string) =>
        `touch ${outside}/${tag}; echo "outside=$?"; touch ${root}/${tag}; echo "inside=$?"`
      const confined = await open(sandbox(), mode, root, termSpec(['sh', '-c', script('c')], root))
      await confined.terminal.done
      expect(confined.screen.text).toContain('outside=1')
      expect(existsSync(join(outside, 'c'))).toBe(false)
      expect(confined.screen.text).toContain(mode === 'workspace-write' ? 'inside=0' : 'inside=1')
      expect(existsSync(join(root, 'c'))).toBe(mode === 'workspace-write')
      const control = await open(sandbox(), 'danger-full-access', root, termSpec(['sh', '-c', script('u')], root))
      await control.terminal.done
      expect(control.screen.text).toContain('outside=0')
      expect(existsSync(join(outside, 'u'))).toBe(true)
    },
  )

  // Landlock terminals get the host-built ruleset as a descriptor; bubblewrap's get rules on argv.
  if (backend === 'landlock')
    it('a handed-over ruleset whose sandbox is disposed, that cannot be built, or that the argv does not ask for, runs nothing (SpawnError at landlock)', async () => {
      const root = scratchDir('cordon-cterm-closed-ruleset')
      const c = sandbox().confineTerminal(termSpec(['sh', '-c', `touch ${root}/ran`], root), {
        mode: 'workspace-write',
        workspaceRoot: root,
      })
      const fresh = () => c.spec.ruleset!.fresh()
      const failing = () => {
        throw Object.assign(new Error('refused'), { errno: 9 })
      }
      for (const spec of [
        { ...c.spec, ruleset: { closed: true, fresh } },
        { ...c.spec, ruleset: { closed: false, fresh: failing } },
        { ...c.spec, argv: c.spec.argv.map((a) => (a === '@ruleset' ? '7' : a)) },
      ]) {
        const error = await runtime.spawnTerminal(spec).catch((e: unknown) => e)
        expect(isSpawnError(error) && error.stage === 'landlock' && error.code === 'EBADF', String(error)).toBe(true)
      }
      expect(existsSync(join(root, 'ran'))).toBe(false)
      // The control: as planned, it runs.
      const t = await runtime.spawnTerminal(c.spec)
      opened.push(t)
      expect(await t.done).toEqual({ exitCode: 0, signal: null })
      expect(existsSync(join(root, 'ran'))).toBe(true)
    })

  if (backend === 'bubblewrap')
    it('a rule whose inode changed since planning: the program never runs, the terminal says why, exit 125', async () => {
      const root = scratchDir('cordon-cterm-stale')
      const c = sandbox().confineTerminal(termSpec(['sh', '-c', `touch ${root}/ran`], root), {
        mode: 'workspace-write',
        workspaceRoot: root,
      })
      const argv = [...c.spec.argv]
      const rule = argv.findIndex((a, i) => argv[i - 1] === '--rule' && a.endsWith(`:${root}`))
      expect(rule).toBeGreaterThan(0)
      argv[rule] = argv[rule]!.replace(/:\d+:(\/.*)$/, ':999999999:$1') // another inode than the root's
      const terminal = await runtime.spawnTerminal({ ...c.spec, argv })
      opened.push(terminal)
      const screen = new Screen(terminal)
      expect(await terminal.done).toEqual({ exitCode: 125, signal: null })
      expect(screen.text).toContain('cordon-exec: the command did not start (landlock: Stale file handle)')
      expect(existsSync(join(root, 'ran'))).toBe(false)
    })

  it('terminate() tears down a confined session with a stopped job and a TERM/HUP-ignoring one; no survivor', async () => {
    const root = scratchDir('cordon-cterm-down')
    const t = await open(sandbox(), 'read-only', root, termSpec(BASH, root, { env: BASH_ENV, graceMs: 300 }))
    await t.screen.waitFor(PROMPT)
    await command(t, '(trap "" TERM HUP; exec sleep 100) &')
    t.terminal.write('sleep 100\r')
    await until(
      () => t.terminal.inspectForeground(),
      (f) => f?.command === 'sleep',
    )
    t.terminal.write('\x1a')
    await t.screen.waitFor(/Stopped/)
    await t.screen.waitFor(PROMPT)
    const pids = members(t.terminal)
    expect(pids.length).toBeGreaterThanOrEqual(backend === 'bubblewrap' ? 5 : 4) // [bwrap,] init, bash, 2 sleeps
    await t.terminal.terminate()
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false)
  })

  it('no host fd reaches the command or stays with its supervisor; unconfined terminals hold no other master', () => {
    // A host that inherited a descriptor without close-on-exec (fd 40, opened by python3, which
    // then execs Node: Node marks only its low fds) opens a terminal that stays open, then lists
    // the fds of an unconfined terminal's program and of every process of a confined one's session.
    const dir = scratchDir('cordon-cterm-fds')
    chmodSync(dir, 0o755)
    const host = join(dir, 'host.mjs')
    const inherited = join(dir, 'inherited')
    writeFileSync(inherited, '')
    writeFileSync(
      host,
      `import { readdirSync, readlinkSync } from 'node:fs'\n` +
        `import { LocalSandbox, LocalSubprocessRuntime } from ${JSON.stringify(dist)}\n` +
        `const sandbox = await LocalSandbox.create({ backends: [${JSON.stringify(backend)}] })\n` +
        `const rt = new LocalSubprocessRuntime()\n` +
        `const spec = (argv) => ({ argv, cwd: ${JSON.stringify(dir)}, cols: 80, rows: 24, graceMs: 500 })\n` +
        `const fds = (pid) => readdirSync('/proc/' + pid + '/fd').map((f) => [Number(f), readlinkSync('/proc/' + pid + '/fd/' + f)])\n` +
        `const list = ['sh', '-c', 'read x']\n` +
        `const other = await rt.spawnTerminal(spec(['sleep', '30']))\n` +
        `const wait = () => new Promise((r) => setTimeout(r, 300))\n` +
        `const plain = await rt.spawnTerminal(spec(list)); await wait()\n` +
        `const confined = await rt.spawnTerminal(sandbox.confineTerminal(spec(list), { mode: 'read-only', workspaceRoot: ${JSON.stringify(dir)} }).spec); await wait()\n` +
        `const program = (await confined.inspectForeground()).pid\n` +
        `const session = confined.members().map((m) => m.pid)\n` +
        `const out = { hostFd: readlinkSync('/proc/self/fd/40'), plain: fds(plain.pid), program: fds(program), session: session.filter((p) => p !== program).map((p) => [p, fds(p)]) }\n` +
        `console.log(JSON.stringify(out))\n` +
        `for (const t of [plain, confined]) t.write('\\r')\n` +
        `await rt.dispose(); await sandbox.dispose()\n`,
    )
    const launch =
      'import os, sys\nos.dup2(os.open(sys.argv[3], os.O_RDONLY), 40)\nos.execv(sys.argv[1], sys.argv[1:3])'
    const r = spawnSync('python3', ['-c', launch, process.execPath, host, inherited], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(r.status, r.stderr).toBe(0)
    const facts = JSON.parse(r.stdout.trim()) as {
      hostFd: string
      plain: [number, string][]
      program: [number, string][]
      session: [number, [number, string][]][]
    }
    expect(facts.hostFd).toBe(inherited)
    // Unconfined: another terminal's master no longer arrives (node-pty opens masters without
    // close-on-exec; cordon sets it). What the host itself inherited without the flag still does.
    expect(facts.plain.filter(([, link]) => link === '/dev/ptmx')).toEqual([])
    expect(facts.plain).toContainEqual([40, inherited])
    // Confined: the program holds the pty on 0..2 and nothing else; the supervisor (and bwrap)
    // hold neither the host's fd nor any master.
    expect(facts.program.map(([fd]) => fd)).toEqual([0, 1, 2])
    expect(facts.program.every(([, link]) => /^\/dev\/pts\/\d+$/.test(link))).toBe(true)
    expect(facts.session.length).toBe(backend === 'bubblewrap' ? 2 : 1)
    for (const [pid, list] of facts.session) {
      for (const [fd, link] of list) {
        expect(link, `pid ${pid} fd ${fd}`).not.toBe(inherited)
        expect(link, `pid ${pid} fd ${fd}`).not.toBe('/dev/ptmx')
      }
    }
  })

  it('a host killed outright (SIGKILL, no exit hook) takes its confined sessions with it', async () => {
    const dir = scratchDir('cordon-cterm-kill')
    chmodSync(dir, 0o755)
    const host = join(dir, 'host.mjs')
    writeFileSync(
      host,
      `import { LocalSandbox, LocalSubprocessRuntime } from ${JSON.stringify(dist)}\n` +
        `const sandbox = await LocalSandbox.create({ backends: [${JSON.stringify(backend)}] })\n` +
        `const rt = new LocalSubprocessRuntime()\n` +
        `const spec = { argv: ['sh', '-c', "trap '' TERM HUP; sleep 60 & echo ready; wait"], cwd: ${JSON.stringify(dir)}, cols: 80, rows: 24, graceMs: 5000 }\n` +
        `const t = await rt.spawnTerminal(sandbox.confineTerminal(spec, { mode: 'read-only', workspaceRoot: ${JSON.stringify(dir)} }).spec)\n` +
        `let out = ''\n` +
        `t.onData((s) => { out += s; if (out.includes('ready')) console.log(JSON.stringify(t.members().map((m) => m.pid))) })\n`,
    )
    const child = spawn(process.execPath, [host], { stdio: ['ignore', 'pipe', 'inherit'] })
    const line = await new Promise<string>((resolve, reject) => {
      let text = ''
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString()
        if (text.includes('\n')) resolve(text.trim())
      })
      child.once('exit', (code) => reject(new Error(`host exited ${code} before reporting`)))
    })
    const pids = JSON.parse(line) as number[]
    expect(pids.length).toBeGreaterThanOrEqual(backend === 'bubblewrap' ? 4 : 3) // [bwrap,] init, sh, sleep
    for (const pid of pids) expect(alive(pid)).toBe(true)
    child.kill('SIGKILL')
    // The supervisor's parent-death signal (Landlock), bwrap's --die-with-parent (bubblewrap).
    expect(await eventually(() => pids.every((p) => !alive(p)), 5000)).toBe(true)
  })

  it('the host keeps no descriptor of confined terminals it ran', async () => {
    const root = scratchDir('cordon-cterm-leak')
    const once = async () => {
      const t = await open(sandbox(), 'read-only', root, termSpec(['/bin/true'], root))
      await t.terminal.done
      await t.terminal.terminate()
    }
    await once()
    // The sandbox keeps one ruleset per plan ready for the next Landlock terminal (built once the
    // last one is done): it is in `before`, taken by each next spawn and made again, never more.
    await new Promise((r) => setTimeout(r, 50))
    const count = () => readdirSync('/proc/self/fd').filter((f) => readlinkSafe(f) !== undefined).length
    const before = count()
    for (let i = 0; i < 5; i++) await once()
    expect(await eventually(() => count() === before, 5000)).toBe(true)
  })
})

/** What `fn` threw (undefined when it returned). */
function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  return undefined
}

function readlinkSafe(fd: string): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}
