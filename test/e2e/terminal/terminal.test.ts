// spawnTerminal against real ptys (node-pty) and real processes: the seed-003 terminal primitive.
// Nothing here mocks a pty or a process; liveness is read from /proc (zombies count as dead).
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { isInvalidRequestError, isSpawnError } from '../../../src/policy/errors.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { isTerminalCleanupError, TerminalCleanupError } from '../../../src/subprocess/terminal/errors.js'
import { ptsPathOf, readStat } from '../../../src/subprocess/terminal/session.js'
import type { SubprocessTerminalHandle, SubprocessTerminalSpawnSpec } from '../../../src/subprocess/types.js'
import { invalid } from '../../support/invalid.js'
import { alive, eventually, pidsIn } from '../../support/subprocess/processes.js'
import { scratchDir } from '../../support/scratch.js'
import { describePty, Screen, until } from '../../support/subprocess/terminal.js'

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-term') })
afterAll(() => runtime.dispose())
// A test that fails midway must not leave its terminal to the next one.
const opened: SubprocessTerminalHandle[] = []
afterEach(() => Promise.all(opened.splice(0).map((t) => t.terminate())).then(() => undefined))

/** A quiet interactive bash: no rc files, a fixed prompt, no history file. */
const BASH = ['bash', '--norc', '--noprofile', '-i']
const BASH_ENV = { PS1: 'PROMPT$ ', HISTFILE: '/dev/null', INPUTRC: '/dev/null', TERM: 'dumb' }
const PROMPT = /PROMPT\$ $/
/** Half of a surrogate pair: what a chunk cut inside a 4-byte character would end or start with. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function spec(argv: readonly string[], extra: Partial<SubprocessTerminalSpawnSpec> = {}): SubprocessTerminalSpawnSpec {
  return { argv, cwd: '/', cols: 80, rows: 24, graceMs: 1000, ...extra }
}

async function open(argv: readonly string[], extra: Partial<SubprocessTerminalSpawnSpec> = {}) {
  const terminal = await runtime.spawnTerminal(spec(argv, extra))
  opened.push(terminal)
  return { terminal, screen: new Screen(terminal) }
}

async function bash(extra: Partial<SubprocessTerminalSpawnSpec> = {}) {
  const t = await open(BASH, { env: BASH_ENV, ...extra })
  await t.screen.waitFor(PROMPT)
  return t
}

/** Types `line` + Enter and waits for the prompt after its output; returns what was printed in between. */
async function command(t: { terminal: SubprocessTerminalHandle; screen: Screen }, line: string): Promise<string> {
  const from = t.screen.mark()
  t.terminal.write(`${line}\r`)
  await t.screen.waitFor(/PROMPT\$ $/, 10_000, from + line.length)
  return t.screen.text.slice(from)
}

describe('validation at the boundary (no pty needed)', () => {
  it('lists every problem at once and allocates nothing', async () => {
    const before = runtime.liveCount
    const error = await runtime
      .spawnTerminal({ argv: [], cwd: 'relative', cols: 0, rows: 70_000, graceMs: -1, extra: 1 } as never)
      .catch((e: unknown) => e)
    expect(isInvalidRequestError(error)).toBe(true)
    const issues = (error as { issues: string[] }).issues.join('\n')
    for (const field of ['argv', 'cwd', 'cols', 'rows', 'graceMs', 'extra']) expect(issues).toMatch(field)
    expect(runtime.liveCount).toBe(before)
  })

  it('an already-aborted signal throws before anything is forked', async () => {
    const ac = new AbortController()
    ac.abort(new Error('user stop'))
    const error = await runtime.spawnTerminal(spec(['/bin/true'], { signal: ac.signal })).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', message: 'aborted before spawn: user stop' })
  })
})

await describePty('spawnTerminal (real ptys)', () => {
  it('fails like spawn for a missing program or cwd, without forking', async () => {
    const before = runtime.liveCount
    const missing = await runtime.spawnTerminal(spec(['cordon-no-such-program'])).catch((e: unknown) => e)
    expect(isSpawnError(missing) && missing.stage === 'exec' && missing.code === 'ENOENT').toBe(true)
    const badCwd = await runtime.spawnTerminal(spec(['/bin/true'], { cwd: '/nonexistent-cordon' })).catch((e) => e)
    expect(isSpawnError(badCwd) && badCwd.stage === 'chdir').toBe(true)
    expect(runtime.liveCount).toBe(before)
  })

  it('an interactive program is answered at its prompt; exit facts and the end of output follow', async () => {
    const t = await open(['sh', '-c', 'printf "name? "; read name; echo "hello, $name"; exit 3'])
    await t.screen.waitFor('name? ')
    expect(t.terminal.write('cordon\r')).toBe(true)
    expect(await t.terminal.done).toEqual({ exitCode: 3, signal: null })
    // The terminal echoes the answer (cooked mode), then the program's line; ONLCR makes \r\n.
    expect(t.screen.text).toBe('name? cordon\r\nhello, cordon\r\n')
    expect(t.terminal.write('late')).toBe(false)
    await t.terminal.terminate()
  })

  it('reports death by signal', async () => {
    const t = await open(['sh', '-c', 'kill -USR1 $$'])
    expect(await t.terminal.done).toEqual({ exitCode: null, signal: 'SIGUSR1' })
  })

  it('an async iterator yields the output in order and ends once the top process exits', async () => {
    const terminal = await runtime.spawnTerminal(spec(['sh', '-c', 'for i in 1 2 3 4 5; do echo line$i; done']))
    let text = ''
    for await (const chunk of terminal) text += chunk
    expect(text).toBe('line1\r\nline2\r\nline3\r\nline4\r\nline5\r\n')
    expect(await terminal.done).toEqual({ exitCode: 0, signal: null })
  })

  it('delivers the whole queued output of a program that writes a lot and exits at once', async () => {
    // libuv ends the master's stream early about every other time here (a hangup after a short
    // read); the output must still be complete every time.
    for (let i = 0; i < 10; i++) {
      const t = await open(['sh', '-c', 'head -c 300000 /dev/zero | tr "\\0" x'])
      await t.terminal.done
      expect(t.screen.text.length, `run ${i}`).toBe(300_000)
      expect(t.screen.text).toBe('x'.repeat(300_000))
    }
  })

  it('an iterator that falls behind pauses the program instead of buffering without bound', async () => {
    const terminal = await runtime.spawnTerminal(spec(['sh', '-c', 'head -c 20000000 /dev/zero | tr "\\0" x']))
    opened.push(terminal)
    const iterator = terminal[Symbol.asyncIterator]()
    let settled = false
    void terminal.done.then(() => {
      settled = true
    })
    await new Promise((r) => setTimeout(r, 1500))
    expect(settled).toBe(false) // unpaused, these 20 MB pass in ~0.2 s here; the writer waits on the pty
    let total = 0
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      total += next.value.length
    }
    expect(total).toBe(20_000_000)
    expect(await terminal.done).toEqual({ exitCode: 0, signal: null })
  })

  it('never splits a multi-byte character across chunks, even when its bytes arrive apart', async () => {
    // € is E2 82 AC, 😀 is F0 9F 98 80: each is written a byte or two at a time, with pauses.
    const script = [
      "printf '\\342'",
      'sleep 0.2',
      "printf '\\202\\254|'",
      "printf '\\360\\237'",
      'sleep 0.2',
      "printf '\\230'",
      'sleep 0.2',
      "printf '\\200|'",
    ].join('; ')
    const t = await open(['sh', '-c', script])
    await t.terminal.done
    expect(t.screen.text).toBe('€|😀|')
    expect(t.screen.chunks.length).toBeGreaterThan(1) // the pauses really split the reads
    for (const chunk of t.screen.chunks) {
      expect(chunk).not.toMatch(LONE_SURROGATE)
      expect(chunk).not.toContain('\uFFFD')
    }
  })

  it('the environment is scrubbed exactly like spawn: credentials and DSH_* dropped, overrides kept', async () => {
    process.env.CORDON_TEST_API_KEY = 'leak'
    process.env.DSH_AMBIENT = 'stale'
    process.env.CORDON_TEST_TOMBSTONE = 'present'
    try {
      const t = await open(['env'], {
        env: { DSH_SESSION: 'fresh', CORDON_TEST_TOMBSTONE: undefined, TERM: 'xterm-256color' },
      })
      await t.terminal.done
      const env = t.screen.text.split('\r\n')
      expect(env).toContain('DSH_SESSION=fresh')
      expect(env).toContain('TERM=xterm-256color')
      expect(env.some((l) => l.startsWith('PATH='))).toBe(true)
      expect(t.screen.text).not.toMatch(/CORDON_TEST_API_KEY|DSH_AMBIENT|CORDON_TEST_TOMBSTONE/)
    } finally {
      delete process.env.CORDON_TEST_API_KEY
      delete process.env.DSH_AMBIENT
      delete process.env.CORDON_TEST_TOMBSTONE
    }
  })

  it('the program leads its own session on the pty; TERM is dumb when the env names none', async () => {
    const t = await open(['sh', '-c', 'echo "$TERM"; ps -o pid=,pgid=,sid=,tty= -p $$; read x'], {
      env: { TERM: undefined },
    })
    await t.screen.waitFor(/pts\/\d+\s*\r\n/)
    const [term, ids] = t.screen.text.split('\r\n')
    expect(term).toBe('dumb')
    const [pid, pgid, sid, tty] = (ids ?? '').trim().split(/\s+/)
    expect(Number(pid)).toBe(t.terminal.pid)
    expect([Number(pgid), Number(sid)]).toEqual([t.terminal.pid, t.terminal.pid])
    // The controlling-terminal device in /proc decodes to the same slave ps names.
    expect(ptsPathOf(readStat(t.terminal.pid)!.ttyNr)).toBe(`/dev/${tty}`)
    t.terminal.write('\r')
    await t.terminal.done
  })

  describe('stdin-wait detection (inspectForeground)', () => {
    it('a program blocked in read(0) waits for input; the same program sleeping does not', async () => {
      const t = await open(['sh', '-c', 'sleep 0.5; read x'])
      const sleeping = await t.terminal.inspectForeground()
      expect(sleeping).toMatchObject({ pgid: t.terminal.pid, programGroup: true, waitingForInput: false })
      const reading = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.waitingForInput === true,
      )
      expect(reading).toMatchObject({
        pgid: t.terminal.pid,
        pid: t.terminal.pid,
        command: 'sh',
        argv: ['sh', '-c', 'sleep 0.5; read x'],
        waitingForInput: true,
        inputWait: { pid: t.terminal.pid, syscall: 'read', fds: [0] },
      })
      t.terminal.write('\r')
      await t.terminal.done
    })

    it("bash at its prompt waits in pselect6 on the terminal; its foreground job is reported with the job's argv", async () => {
      const t = await bash()
      const prompt = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.waitingForInput === true,
      )
      expect(prompt).toMatchObject({ programGroup: true, command: 'bash', waitingForInput: true })
      expect(prompt?.inputWait?.syscall).toMatch(/^(pselect6|select|read|poll|ppoll)$/)
      t.terminal.write('sleep 30\r')
      const job = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.command === 'sleep',
      )
      expect(job).toMatchObject({ programGroup: false, command: 'sleep', argv: ['sleep', '30'] })
      expect(job?.waitingForInput).toBe(false)
      expect(job?.pgid).toBe(job?.pid)
      await t.terminal.terminate()
    })

    it('an event-loop program (node) watching stdin through epoll waits for input', async () => {
      const t = await open([process.execPath, '-e', 'process.stdin.on("data", () => process.exit(0))'])
      const fg = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.waitingForInput === true,
      )
      expect(fg?.inputWait?.syscall).toMatch(/^epoll_(p)?wait2?$/)
      t.terminal.write('x\r') // cooked mode: node reads the line once it is complete
      expect(await t.terminal.done).toEqual({ exitCode: 0, signal: null })
    })

    it('undefined once no process of the session is left', async () => {
      const t = await open(['/bin/true'])
      await t.terminal.done
      await eventually(() => (runtime.liveCount === 0 ? true : !alive(t.terminal.pid)))
      expect(await t.terminal.inspectForeground()).toBeUndefined()
      expect(await t.terminal.signalForeground('SIGINT')).toBe(false)
    })
  })

  describe('signals and job control in bash', () => {
    it('Ctrl-C reaches the foreground job, not the shell', async () => {
      const t = await bash()
      t.terminal.write('sleep 30\r')
      const job = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.command === 'sleep',
      )
      t.terminal.write('\x03')
      expect(await eventually(() => !alive(job!.pid))).toBe(true)
      await t.screen.waitFor(PROMPT)
      expect(await command(t, 'echo "status $?"')).toContain('status 130')
      expect(alive(t.terminal.pid)).toBe(true)
      await t.terminal.terminate()
    })

    it('signalForeground interrupts the job; SIGKILL is refused for the shell’s own group', async () => {
      const t = await bash()
      t.terminal.write('sleep 30\r')
      const job = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.command === 'sleep',
      )
      expect(await t.terminal.signalForeground('SIGINT')).toBe(true)
      expect(await eventually(() => !alive(job!.pid))).toBe(true)
      await t.screen.waitFor(PROMPT)
      await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.programGroup === true,
      )
      const refused = await t.terminal.signalForeground('SIGKILL').catch((e: unknown) => e)
      expect(isInvalidRequestError(refused)).toBe(true)
      expect(String((refused as Error).message)).toMatch(/refusing to SIGKILL the session leader's own group/)
      expect(alive(t.terminal.pid)).toBe(true)
      const bad = await t.terminal.signalForeground('SIGNOPE' as NodeJS.Signals).catch((e: unknown) => e)
      expect(isInvalidRequestError(bad) && bad.issues[0]).toMatch(/signal must be a signal name/)
      await t.terminal.terminate()
    })

    it('under a launcher (launcher: true) the program’s group is the protected one, not the leader’s', async () => {
      // A real launcher shape: the session leader (bash with job control) starts the interactive
      // shell as its first child, in a group of its own, and hands it the foreground, as cordon-exec
      // does under confineTerminal. `; exit $?` keeps the leader from exec'ing into its child; a
      // non-interactive bash drops PS1, so the child gets it again.
      const argv = ['bash', '-c', 'set -m; PS1="PROMPT\\$ " bash --norc --noprofile -i; exit $?']
      const t = await open(argv, { env: BASH_ENV, launcher: true })
      await t.screen.waitFor(PROMPT)
      const inner = Number(
        (await command({ terminal: t.terminal, screen: t.screen }, 'echo "pid $$"')).match(/pid (\d+)/)?.[1],
      )
      expect(inner).not.toBe(t.terminal.pid)
      const prompt = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.waitingForInput === true,
      )
      expect(prompt).toMatchObject({ pgid: inner, pid: inner, programGroup: true, command: 'bash' })
      const refused = await t.terminal.signalForeground('SIGKILL').catch((e: unknown) => e)
      expect(String((refused as Error).message)).toMatch(/refusing to SIGKILL the program's own group/)
      t.terminal.write('sleep 30\r')
      const job = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.command === 'sleep',
      )
      expect(job?.programGroup).toBe(false)
      expect(await t.terminal.signalForeground('SIGKILL')).toBe(true) // a job may be killed
      expect(await eventually(() => !alive(job!.pid))).toBe(true)
      expect(alive(inner)).toBe(true)
      t.terminal.write('exit 4\r')
      expect(await t.terminal.done).toEqual({ exitCode: 4, signal: null })
    })

    it('job control: sleep 10 &, fg, Ctrl-Z, and a stopped job does not survive terminate()', async () => {
      const t = await bash()
      const started = await command(t, 'sleep 10 &')
      const pid = Number(started.match(/\[1\] (\d+)/)?.[1])
      expect(pid).toBeGreaterThan(0)
      t.terminal.write('fg\r')
      const fg = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.pgid === pid,
      )
      expect(fg).toMatchObject({ pgid: pid, command: 'sleep', programGroup: false })
      t.terminal.write('\x1a') // Ctrl-Z
      await t.screen.waitFor(/Stopped\s+sleep 10/)
      await t.screen.waitFor(PROMPT)
      const back = await until(
        () => t.terminal.inspectForeground(),
        (f) => f?.programGroup === true,
      )
      expect(back?.programGroup).toBe(true)
      expect(readState(pid)).toMatch(/^[Tt]$/)
      expect(await command(t, 'jobs')).toMatch(/\[1\]\+\s+Stopped\s+sleep 10/)
      await t.terminal.terminate()
      expect(alive(pid)).toBe(false)
      expect(alive(t.terminal.pid)).toBe(false)
    })

    it('resize is seen by the program (stty size) and by its SIGWINCH trap', async () => {
      const t = await bash({ cols: 80, rows: 24 })
      expect(await command(t, 'stty size')).toContain('24 80')
      await command(t, "trap 'echo WINCH' WINCH")
      // The trap's own output, not the echo of the trap command typed above.
      const winch = t.screen.mark()
      t.terminal.resize(132, 50)
      await t.screen.waitFor('WINCH\r\n', 10_000, winch)
      expect(await command(t, 'stty size')).toContain('50 132')
      expect(invalid(() => t.terminal.resize(0, 10)).issues[0]).toMatch(/cols/)
      await t.terminal.terminate()
    })
  })

  describe('terminate()', () => {
    it('tears down a TERM- and HUP-ignoring tree, including a child that left the session, leaving no survivor', async () => {
      const script = [
        "trap '' TERM HUP",
        'sleep 60 & echo "pid $!"',
        '(trap "" TERM HUP; sleep 60) & echo "pid $!"',
        'setsid sleep 60 & echo "pid $!"',
        'echo ready',
        'wait',
      ].join('\n')
      const t = await open(['sh', '-c', script], { graceMs: 300 })
      await t.screen.waitFor('ready')
      const pids = [t.terminal.pid, ...pidsIn(t.screen.text.replace(/pid /g, ''))]
      expect(pids.length).toBe(4)
      for (const pid of pids) expect(alive(pid)).toBe(true)
      const t0 = Date.now()
      await t.terminal.terminate()
      expect(Date.now() - t0).toBeGreaterThanOrEqual(290) // the grace was honoured before KILL
      for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false)
      expect(await t.terminal.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
      expect(runtime.liveCount).toBe(0)
    })

    it('a cooperative session ends within the grace, by the hangup and TERM; terminate is idempotent', async () => {
      const t = await bash({ graceMs: 5000 })
      const started = await command(t, 'sleep 30 &')
      const job = Number(started.match(/\[1\] (\d+)/)?.[1])
      const t0 = Date.now()
      const [a, b] = [t.terminal.terminate(), t.terminal.terminate()]
      await Promise.all([a, b])
      expect(Date.now() - t0).toBeLessThan(4000)
      expect(alive(job)).toBe(false)
      expect((await t.terminal.done).signal).toBe('SIGHUP')
      await t.terminal.terminate()
    })

    it('output ends once the top process exits even while a member still holds the terminal; terminate sweeps it', async () => {
      // HUP is ignored before the fork: the kernel hangs up the foreground group when the leader exits.
      const t = await open(['sh', '-c', "trap '' HUP; (sleep 30; echo never) & echo top-done"])
      await t.terminal.done
      expect(t.screen.text).toBe('top-done\r\n')
      const members = (t.terminal as unknown as { members(): { pid: number }[] }).members()
      expect(members.length).toBeGreaterThan(0)
      expect(runtime.liveCount).toBeGreaterThan(0) // still owned: its session is not empty
      await t.terminal.terminate()
      for (const m of members) expect(alive(m.pid)).toBe(false)
      expect(runtime.liveCount).toBe(0)
    })

    it('a cleanup failure names every surviving pid', () => {
      const error = new TerminalCleanupError([42, 7, 42], { topProcessAlive: true })
      expect(isTerminalCleanupError(error)).toBe(true)
      expect(error.message).toBe('terminal cleanup failed; surviving pid(s): 7, 42 (the top process was not reaped)')
      expect(error.pids).toEqual([7, 42])
    })
  })

  describe('the host', () => {
    it('no fd of the host leaks: twenty terminals later the host holds the same descriptors', async () => {
      const warm = await open(['/bin/true'])
      await warm.terminal.done
      await warm.terminal.terminate()
      const fds = () => readdirSync('/proc/self/fd').length
      const before = fds()
      for (let i = 0; i < 20; i++) {
        const t = await open(i % 2 ? ['/bin/true'] : ['sleep', '30'])
        if (i % 2 === 0) await t.screen.waitFor(/^/)
        await t.terminal.terminate()
      }
      expect(await eventually(() => fds() === before, 5000)).toBe(true)
    })

    it('disposal terminates every terminal and waits; spawnTerminal afterwards refuses', async () => {
      const rt = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-term-dispose') })
      const script = 'trap \'\' TERM HUP; sleep 60 & echo "pid $!"; echo ready; wait'
      const a = await rt.spawnTerminal(spec(['sh', '-c', script], { graceMs: 200 }))
      const b = await rt.spawnTerminal(spec(BASH, { env: BASH_ENV }))
      const screen = new Screen(a)
      await screen.waitFor('ready')
      const pids = [a.pid, b.pid, ...pidsIn(screen.text.replace(/pid /g, ''))]
      expect(rt.liveCount).toBe(2)
      await rt.dispose()
      for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false)
      expect(rt.liveCount).toBe(0)
      const refused = await rt.spawnTerminal(spec(['/bin/true'])).catch((e: unknown) => e)
      expect(isInvalidRequestError(refused)).toBe(true)
    })

    it('a host that exits (process.exit) takes its terminal sessions with it', () => {
      const dir = scratchDir('cordon-term-exit')
      const host = join(dir, 'host.mjs')
      const dist = join(import.meta.dirname, '..', '..', '..', 'dist', 'index.js')
      writeFileSync(
        host,
        `import { LocalSubprocessRuntime } from ${JSON.stringify(dist)}\n` +
          `const rt = new LocalSubprocessRuntime()\n` +
          `const t = await rt.spawnTerminal({ argv: ['sh', '-c', "trap '' TERM HUP; sleep 60 & echo \\"pid $!\\"; wait"], cwd: '/', cols: 80, rows: 24, graceMs: 5000 })\n` +
          `let out = ''\n` +
          `t.onData((s) => { out += s; if (out.includes('\\n')) { process.stdout.write(t.pid + ' ' + out); process.exit(23) } })\n`,
      )
      const r = spawnSync(process.execPath, [host], { encoding: 'utf8', timeout: 30_000 })
      expect(r.status, r.stderr).toBe(23)
      const pids = pidsIn(r.stdout.replace(/pid /g, ''))
      expect(pids.length).toBe(2)
      return eventually(() => pids.every((p) => !alive(p)), 5000).then((gone) => expect(gone).toBe(true))
    })
  })
})

/** The state letter of /proc/<pid>/stat (T: stopped). */
function readState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
}
