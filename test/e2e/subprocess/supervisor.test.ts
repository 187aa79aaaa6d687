// `cordon-exec init` (the supervisor a run gets under bwrap and in a terminal, from argv) against
// real process trees: status lines, mirrored exit, tree-scoped termination (setsid'd and
// double-forked descendants included), host death.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'

const BIN = resolve(import.meta.dirname, '../../../build/Release/cordon-exec')

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  at: number
}

interface Supervised {
  child: ChildProcess
  pid: number
  /** All stdout seen so far. */
  out: () => string
  /** The whole status channel, resolved when the supervisor closes it, with the time it ended. */
  status: Promise<{ text: string; at: number }>
  exit: Promise<Exit>
}

// Every pid a test learned about; whatever is still alive afterwards is SIGKILLed so a failing
// test does not leave sleeps behind.
const tracked = new Set<number>()

afterEach(() => {
  for (const pid of tracked) {
    if (!isGone(pid)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  tracked.clear()
})

/** Starts the supervisor leading its own group, with the status channel on fd 3. */
function supervise(command: string[], options: string[] = []): Supervised {
  const child = spawn(BIN, ['init', '--status-fd', '3', '--background', ...options, '--', ...command], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  if (child.pid === undefined) throw new Error('spawn failed')
  tracked.add(child.pid)
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c))
  child.stderr?.resume()
  const exit = new Promise<Exit>((res) => child.on('exit', (code, signal) => res({ code, signal, at: Date.now() })))
  return { child, pid: child.pid, out: () => out, status: readAll(child.stdio[3] as Readable), exit }
}

function readAll(stream: Readable): Promise<{ text: string; at: number }> {
  return new Promise((res, rej) => {
    let text = ''
    stream.setEncoding('utf8')
    stream.on('data', (c: string) => (text += c))
    stream.on('error', rej)
    stream.on('end', () => res({ text, at: Date.now() }))
  })
}

/** Fails with a clear message instead of hanging until the test timeout. */
function within<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** True once the pid no longer runs: /proc entry absent or a zombie (PID 1 reaps late here). */
function isGone(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return true
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state === 'Z' || state === 'X'
}

/** The ppid field of /proc/<pid>/stat. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
}

async function waitUntil(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

async function waitGone(pids: number[], timeoutMs = 10_000): Promise<void> {
  await waitUntil(`pids ${pids.join(' ')} to exit`, () => pids.every(isGone), timeoutMs)
}

/** Waits for a `ready` line, then returns every `pid N` the command printed (and tracks them). */
async function readyPids(read: () => string): Promise<number[]> {
  await waitUntil('the command to print ready', () => /^ready$/m.test(read()))
  const pids = [...read().matchAll(/pid (\d+)/g)].map((m) => Number(m[1]))
  for (const pid of pids) tracked.add(pid)
  return pids
}

describe('cordon-exec init: status lines and mirrored exit', () => {
  it('prints a version and rejects unknown usage with 125', async () => {
    const version = spawn(BIN, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] })
    const text = await readAll(version.stdout as Readable)
    expect(text.text).toMatch(/^cordon-exec \d+\.\d+\.\d+\n$/)
    for (const argv of [
      [],
      ['--bogus'],
      ['init'],
      ['init', '--grace-ms', 'x', '--', '/bin/true'],
      ['init', '--', 'true'],
    ]) {
      const bad = spawn(BIN, argv, { stdio: 'ignore' })
      const code = await new Promise((r) => bad.on('exit', r))
      expect(code).toBe(125)
    }
  })

  it('mirrors the exit code and reports it', async () => {
    const s = supervise(['/bin/sh', '-c', 'echo hello; exit 7'])
    expect((await within(s.status, 'the status line')).text).toMatch(/^started \d+\nexit 7\n$/)
    expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ code: 7, signal: null })
    expect(s.out()).toBe('hello\n')
  })

  it('mirrors a signal death and reports it', async () => {
    const s = supervise(['/bin/sh', '-c', 'kill -TERM $$'])
    expect((await within(s.status, 'the status line')).text).toMatch(/^started \d+\nsignal 15\n$/)
    expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ code: null, signal: 'SIGTERM' })
  })

  it('reports an exec failure and exits 127', async () => {
    const s = supervise(['/nonexistent/cordon-no-such-program'])
    expect((await within(s.status, 'the status line')).text).toBe('error exec 2\n')
    expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ code: 127, signal: null })
  })

  it('exits 125 without running the command when the host is already gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cordon-sup-'))
    try {
      const marker = join(dir, 'ran')
      // Our parent is this test process, so any other pid stands for a host that died.
      const s = supervise(['/usr/bin/touch', marker], ['--host-pid', '1'])
      expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ code: 125 })
      expect(existsSync(marker)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('does not pass the status fd to the command or its descendants', async () => {
    const s = supervise(['/bin/bash', '-c', 'sleep 100 & echo pid $$ pid $!; echo ready; wait'])
    const pids = await readyPids(s.out)
    const statusLink = readlinkSync(`/proc/${s.pid}/fd/3`)
    for (const pid of pids) {
      const links = readdirSync(`/proc/${pid}/fd`).map((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`)
        } catch {
          return ''
        }
      })
      expect(links).not.toContain(statusLink)
    }
    process.kill(s.pid, 'SIGTERM')
    expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ signal: 'SIGTERM' })
    await waitGone(pids)
  })

  it('outlives the command while a descendant lives, then exits', async () => {
    const s = supervise(['/bin/bash', '-c', 'sleep 100 >/dev/null 2>&1 & echo pid $!; echo ready; exit 3'])
    const [leftover] = await readyPids(s.out)
    const status = await within(s.status, 'the status line')
    expect(status.text).toMatch(/^started \d+\nexit 3\n$/)
    // The command is gone, but its orphan keeps the supervisor (its new parent) alive.
    await sleep(500)
    expect(s.child.exitCode).toBeNull()
    expect(isGone(s.pid)).toBe(false)
    expect(parentOf(leftover!)).toBe(s.pid)
    process.kill(leftover!, 'SIGKILL')
    const exit = await within(s.exit, 'the supervisor to exit')
    expect(exit).toMatchObject({ code: 3, signal: null })
    expect(exit.at).toBeGreaterThan(status.at)
  })
})

describe('cordon-exec init: tree termination', () => {
  it('SIGTERM to the supervisor ends a normal tree', async () => {
    const s = supervise([
      '/bin/bash',
      '-c',
      'sleep 100 & a=$!; sleep 100 & echo pid $$ pid $a pid $!; echo ready; wait',
    ])
    const pids = await readyPids(s.out)
    expect(pids).toHaveLength(3)
    process.kill(s.pid, 'SIGTERM')
    expect((await within(s.status, 'the status line')).text).toMatch(/^started \d+\nsignal 15\n$/)
    expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ code: null, signal: 'SIGTERM' })
    await waitGone(pids)
  })

  it('SIGKILLs a TERM-ignoring tree (out-of-group members too) after --grace-ms', async () => {
    const script = [
      "trap '' TERM",
      'sleep 100 & a=$!',
      'sleep 100 & b=$!',
      '(setsid sleep 100 >/dev/null & echo pid $!)',
      'echo pid $$ pid $a pid $b',
      'echo ready',
      'wait',
    ].join('\n')
    const s = supervise(['/bin/bash', '-c', script], ['--grace-ms', '200'])
    const pids = await readyPids(s.out)
    expect(pids).toHaveLength(4)
    const sentAt = Date.now()
    process.kill(s.pid, 'SIGTERM')
    await sleep(50)
    // Still inside the grace period (when this noisy machine let us look in time): TERM was
    // ignored, nothing died.
    const inGrace = pids.map(isGone)
    if (Date.now() - sentAt < 150) expect(inGrace).not.toContain(true)
    const exit = await within(s.exit, 'the supervisor to exit')
    expect(exit).toMatchObject({ code: null, signal: 'SIGKILL' })
    expect(exit.at - sentAt).toBeGreaterThanOrEqual(180)
    expect((await within(s.status, 'the status line')).text).toMatch(/^started \d+\nsignal 9\n$/)
    await waitGone(pids)
  })

  it('reaches setsid grandchildren and double-forked daemons', async () => {
    const script = [
      'setsid sleep 100 >/dev/null & a=$!',
      '( sleep 100 >/dev/null & echo pid $! ) & wait $!',
      "bash -c '(setsid sleep 1000 >/dev/null & echo pid $!)'",
      'echo pid $$ pid $a',
      'echo ready',
      'wait',
    ].join('\n')
    const s = supervise(['/bin/bash', '-c', script])
    const pids = await readyPids(s.out)
    expect(pids).toHaveLength(4)
    process.kill(s.pid, 'SIGTERM')
    expect(await within(s.exit, 'the supervisor to exit')).toMatchObject({ signal: 'SIGTERM' })
    await waitGone(pids)
  })

  it('takes the whole tree down when the host is SIGKILLed', async () => {
    const script = [
      "trap '' TERM",
      'sleep 100 >/dev/null & a=$!',
      '(setsid sleep 100 >/dev/null & echo pid $!)',
      "bash -c '(setsid sleep 1000 >/dev/null & echo pid $!)'",
      'echo pid $$ pid $a',
      'echo ready',
      'wait',
    ].join('\n')
    // A small Node host, like the real one: it spawns the supervisor naming itself as host.
    const hostCode = `
      const { spawn } = require('node:child_process')
      const c = spawn(${JSON.stringify(BIN)},
        ['init', '--background', '--host-pid', String(process.pid), '--', '/bin/bash', '-c', ${JSON.stringify(script)}],
        { stdio: ['ignore', 'inherit', 'inherit'] })
      console.log('pid ' + c.pid)
      setInterval(() => {}, 1000)
    `
    const host = spawn(process.execPath, ['-e', hostCode], { stdio: ['ignore', 'pipe', 'inherit'] })
    tracked.add(host.pid!)
    let out = ''
    host.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c))
    const pids = await readyPids(() => out)
    expect(pids).toHaveLength(5) // supervisor, two setsid'd sleeps, bash, its plain sleep
    expect(pids.some(isGone)).toBe(false)
    host.kill('SIGKILL')
    await waitGone([host.pid!, ...pids])
  })
})
