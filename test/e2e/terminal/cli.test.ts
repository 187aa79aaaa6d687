// `cordon shell` and `cordon run --tty` as a person runs them: bin/cordon.js (over dist/) on a
// real pty standing in for the person's terminal emulator; keys are typed into it and its screen
// is read back. The program runs on a second pty that cordon allocates and relays, confined by
// the policy flags; each confinement claim has its control in a danger-full-access shell.
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessTerminalHandle } from '../../../src/subprocess/types.js'
import { alive, eventually } from '../../support/subprocess/processes.js'
import { scratchDir } from '../../support/scratch.js'
import { describeConfinedTerminals, describePty, Screen } from '../../support/subprocess/terminal.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-shell')
const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-shell-rt') })
afterAll(() => runtime.dispose())
const opened: SubprocessTerminalHandle[] = []
afterEach(() => Promise.all(opened.splice(0).map((t) => t.terminate())).then(() => undefined))

/** A directory outside every policy's root that anyone may write: confined shells must not. */
const outside = scratchDir('cordon-shell-outside')
chmodSync(outside, 0o777)

const QUIET_BASH = { PS1: 'PROMPT$ ', HISTFILE: '/dev/null', INPUTRC: '/dev/null', TERM: 'dumb' }
const PROMPT = /PROMPT\$ $/

/** uid/gid 65534 (nobody), as setpriv takes it. */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']

/** The person's terminal (100×30) running `cordon ARGS` (as nobody with `as: NOBODY`), after printing its own tty's name. */
async function person(args: string[], options: { as?: readonly string[]; cwd?: string } = {}) {
  const quoted = [...(options.as ?? []), process.execPath, bin, ...args]
    .map((w) => `'${w.replace(/'/g, "'\\''")}'`)
    .join(' ')
  const terminal = await runtime.spawnTerminal({
    argv: ['sh', '-c', `echo "outer $(tty)"; exec ${quoted}`],
    cwd: options.cwd ?? root,
    cols: 100,
    rows: 30,
    graceMs: 2000,
    env: QUIET_BASH,
  })
  opened.push(terminal)
  const screen = new Screen(terminal)
  const outer = (await screen.waitFor(/outer (\/dev\/pts\/\d+)\r\n/))[1]
  return { terminal, screen, outer }
}

/** Types a line and returns what appeared up to the next prompt. */
async function type(p: { terminal: SubprocessTerminalHandle; screen: Screen }, line: string): Promise<string> {
  const from = p.screen.mark()
  p.terminal.write(`${line}\r`)
  await p.screen.waitFor(/PROMPT\$ $/, 10_000, from + line.length)
  return p.screen.text.slice(from)
}

function cordon(args: string[], env?: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    ...(env ? { env: { ...process.env, ...env } } : {}),
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('a confined mode no backend can enforce fails closed (no pty needed)', () => {
  // A configured bwrap that is not there (never a PATH search, never a fallback): the only backend
  // asked for is unusable, so nothing may run.
  const noBwrap = { CORDON_BWRAP: '/nonexistent/bwrap' }
  const marker = (tag: string) => ['--', '/bin/sh', '-c', `touch ${root}/ran-${tag}`]

  it.each(['read-only', 'workspace-write'])('cordon shell --mode %s exits 125 and the program never runs', (mode) => {
    const r = cordon(['shell', '--backend', 'bubblewrap', '--mode', mode, ...marker(mode)], noBwrap)
    expect(r.status).toBe(125)
    expect(r.stderr).toMatch(/no sandbox backend is usable.*refusing to run the command unconfined/)
    expect(r.stderr).toMatch(/the configured bwrap \/nonexistent\/bwrap is refused/)
    expect(existsSync(join(root, `ran-${mode}`))).toBe(false)
  })

  it('cordon run --tty fails closed the same way; --json does not combine with --tty', () => {
    const r = cordon(['run', '--tty', '--backend', 'bubblewrap', ...marker('tty')], noBwrap)
    expect(r.status).toBe(125)
    expect(r.stderr).toMatch(/refusing to run the command unconfined/)
    expect(existsSync(join(root, 'ran-tty'))).toBe(false)
    expect(cordon(['run', '--tty', '--json', '--mode', 'danger-full-access', '--', 'true']).status).toBe(125)
  })

  it('cordon shell --help', () => {
    const r = cordon(['shell', '--help'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^Usage: cordon shell/)
  })
})

await describePty('cordon shell / run --tty on real terminals', () => {
  it('a person types into bash on a pty of its own: banner, size, resize, Ctrl-C, exact bytes, exit status', async () => {
    const p = await person(['shell', '--mode', 'danger-full-access', '--', 'bash', '--norc', '--noprofile', '-i'])
    await p.screen.waitFor(`cordon shell: mode danger-full-access, root ${root}, backend none (unconfined)\r\n`)
    await p.screen.waitFor(/PROMPT\$ $/)
    // Never the person's own tty: the program's terminal is another pty, sized like the person's.
    const inner = (await type(p, 'tty')).match(/\/dev\/pts\/\d+/)?.[0]
    expect(inner).toBeDefined()
    expect(inner).not.toBe(p.outer)
    expect(await type(p, 'stty size')).toContain('30 100')
    await type(p, "trap 'echo WINCH' WINCH")
    // The trap's own output, not the echo of the trap command typed above.
    const winch = p.screen.mark()
    p.terminal.resize(120, 40) // the person's window grows: cordon gets SIGWINCH and resizes its pty
    await p.screen.waitFor('WINCH\r\n', 10_000, winch)
    expect(await type(p, 'stty size')).toContain('40 120')
    // Ctrl-C goes through the relay to the pty's line discipline: the job dies, the shell stays.
    // The job says it runs (its output, not the echo of the typed line), then Ctrl-C.
    const job = p.screen.mark()
    p.terminal.write("sh -c 'echo job-running; exec sleep 30'\r")
    await p.screen.waitFor('job-running\r\n', 10_000, job)
    p.terminal.write('\x03')
    await p.screen.waitFor(/\^C\r\nPROMPT\$ $/)
    expect(await type(p, 'echo "status $?"')).toContain('status 130\r\n')
    // The control for the confined shells below: unconfined, a write outside the root lands.
    expect(await type(p, `touch ${outside}/from-danger; echo "wrote=$?"`)).toContain('wrote=0\r\n')
    expect(existsSync(join(outside, 'from-danger'))).toBe(true)
    // Byte-exact relay: the inner pty's \r\n arrives as is (no second CR from the person's tty).
    expect(await type(p, "printf 'a\\nb\\n'")).toContain('a\r\nb\r\n')
    expect(p.screen.text).not.toContain('\r\r\n')
    p.terminal.write('exit 7\r')
    expect(await p.terminal.done).toEqual({ exitCode: 7, signal: null })
  })

  it('jobs the program leaves behind end with it', async () => {
    const p = await person([
      'shell',
      '--mode',
      'danger-full-access',
      '--',
      'sh',
      '-c',
      'trap \'\' HUP; sleep 60 & echo "job $!"',
    ])
    const job = Number((await p.screen.waitFor(/job (\d+)/))[1])
    expect(await p.terminal.done).toEqual({ exitCode: 0, signal: null })
    expect(await eventually(() => !alive(job), 5000)).toBe(true)
  })

  it('a TERM to cordon tears the session down and exits 143', async () => {
    const p = await person(['shell', '--mode', 'danger-full-access', '--', 'bash', '--norc', '--noprofile', '-i'])
    await p.screen.waitFor(/PROMPT\$ $/)
    const shell = Number((await type(p, 'echo "pid $$"')).match(/pid (\d+)/)?.[1])
    expect(alive(shell)).toBe(true)
    process.kill(p.terminal.pid, 'SIGTERM') // the outer top process exec'd into cordon
    expect(await p.terminal.done).toEqual({ exitCode: 143, signal: null })
    expect(await eventually(() => !alive(shell), 5000)).toBe(true)
  })

  it('cordon run --tty gives the command a terminal even when cordon itself has pipes; status passed through', () => {
    const r = cordon([
      'run',
      '--tty',
      '--mode',
      'danger-full-access',
      '--',
      'sh',
      '-c',
      'test -t 0 && test -t 1 && echo "on a tty: $(tty)"; exit 3',
    ])
    expect(r.status).toBe(3)
    expect(r.stdout).toMatch(/on a tty: \/dev\/pts\/\d+\r\n/)
  })

  it('cordon run --tty --timeout ends the command and exits 124', () => {
    const t0 = Date.now()
    const r = cordon(['run', '--tty', '--timeout', '300', '--mode', 'danger-full-access', '--', 'sleep', '30'])
    expect(r.status).toBe(124)
    expect(Date.now() - t0).toBeLessThan(20_000)
  })
})

await describeConfinedTerminals('cordon shell / run --tty, confined', (backend) => {
  const BASH_ARGS = ['--', 'bash', '--norc', '--noprofile', '-i']
  const users = [
    ['root', undefined],
    ['uid 65534', NOBODY],
  ] as const

  describe.each(users)('as %s', (who, as) => {
    it.each(['read-only', 'workspace-write'] as const)(
      'cordon shell --mode %s: banner, its own pty, size and resize, Ctrl-C, a write outside the root refused, exit status',
      async (mode) => {
        const home = scratchDir('cordon-shell-confined')
        if (as) chownSync(home, 65534, 65534)
        const tag = `${backend}-${mode}-${who.replace(/ /g, '')}`
        const p = await person(['shell', '--backend', backend, '--mode', mode, '--root', home, ...BASH_ARGS], {
          as,
          cwd: home,
        })
        await p.screen.waitFor(
          new RegExp(
            `cordon shell: mode ${mode}, root ${escapeRe(home)}, backend ${backend} \\(enforcement (full|partial)\\)\r\n`,
          ),
        )
        await p.screen.waitFor(PROMPT)
        expect(await type(p, 'id -u')).toContain(as ? '65534\r\n' : '0\r\n')
        const inner = (await type(p, 'tty')).match(/\/dev\/(pts\/\d+|console)/)?.[0]
        expect(inner).toBeDefined()
        expect(inner).not.toBe(p.outer)
        expect(await type(p, 'stty size')).toContain('30 100')
        await type(p, "trap 'echo WINCH' WINCH")
        // The trap's own output, not the echo of the trap command typed above.
        const winch = p.screen.mark()
        p.terminal.resize(120, 40)
        await p.screen.waitFor('WINCH\r\n', 10_000, winch)
        expect(await type(p, 'stty size')).toContain('40 120')
        // The job says it runs (its output, not the echo of the typed line), then Ctrl-C.
        const job = p.screen.mark()
        p.terminal.write("sh -c 'echo job-running; exec sleep 30'\r")
        await p.screen.waitFor('job-running\r\n', 10_000, job)
        p.terminal.write('\x03')
        await p.screen.waitFor(/\^C\r\nPROMPT\$ $/)
        expect(await type(p, 'echo "status $?"')).toContain('status 130\r\n')
        // The attack, whose control is the danger-full-access shell above.
        expect(await type(p, `touch ${outside}/${tag}; echo "outside=$?"`)).toContain('outside=1\r\n')
        expect(existsSync(join(outside, tag))).toBe(false)
        expect(await type(p, `touch ${home}/inside; echo "inside=$?"`)).toContain(
          mode === 'workspace-write' ? 'inside=0\r\n' : 'inside=1\r\n',
        )
        expect(existsSync(join(home, 'inside'))).toBe(mode === 'workspace-write')
        p.terminal.write('exit 7\r')
        expect(await p.terminal.done).toEqual({ exitCode: 7, signal: null })
      },
    )
  })

  it('as uid 65534, the control: a danger-full-access shell writes outside the root', async () => {
    const p = await person(['shell', '--mode', 'danger-full-access', ...BASH_ARGS], { as: NOBODY, cwd: outside })
    await p.screen.waitFor(PROMPT)
    expect(await type(p, `touch ${outside}/nobody-danger-${backend}; echo "wrote=$?"`)).toContain('wrote=0\r\n')
    expect(existsSync(join(outside, `nobody-danger-${backend}`))).toBe(true)
    p.terminal.write('exit\r')
    await p.terminal.done
  })

  it('cordon run --tty: the command gets a terminal, confined; its status passes through', () => {
    const r = cordon([
      'run',
      '--tty',
      '--backend',
      backend,
      '--mode',
      'workspace-write',
      '--',
      'sh',
      '-c',
      `test -t 0 && test -t 1 && echo "on a tty"; touch ${outside}/run-tty-${backend}; echo "outside=$?"; exit 3`,
    ])
    expect(r.status).toBe(3)
    expect(r.stdout).toContain('on a tty\r\n')
    expect(r.stdout).toContain('outside=1\r\n')
    expect(existsSync(join(outside, `run-tty-${backend}`))).toBe(false)
  })
})

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
