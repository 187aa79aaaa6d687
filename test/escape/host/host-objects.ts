/**
 * The host objects of host-fixtures.py, driven from Node: one python3 process per runner keeps
 * them; `setup` makes a fresh set per attack and returns the variables that name them, `inspect`
 * reads their state, and `changes` says what an attack did to them.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import path from 'node:path'
import readline from 'node:readline'

/** The interpreter the fixtures run on (pyenv shims are not readable by uid 65534). */
export const PYTHON = '/usr/bin/python3'

const SCRIPT = path.join(import.meta.dirname, 'host-fixtures.py')

type HostState = Record<string, unknown>

/** The keeper of the host objects. */
export class HostObjects {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>
  private readonly answers: Array<(line: string) => void> = []
  private tag = ''

  constructor() {
    this.child = spawn(PYTHON, ['-u', SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] })
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => this.answers.shift()?.(line))
  }

  private async ask(command: Record<string, unknown>): Promise<Record<string, unknown>> {
    const line = await new Promise<string>((resolve) => {
      this.answers.push(resolve)
      this.child.stdin.write(`${JSON.stringify(command)}\n`)
    })
    const answer = JSON.parse(line) as Record<string, unknown>
    if (answer.error !== undefined) throw new Error(`host fixtures: ${String(answer.error)}`)
    return answer
  }

  /**
   * Makes a fresh set of host objects (OUT/hostfifo and OUT/hostsock among them, and the xattr
   * `user.keep` on ROOT/file); returns their variables. `pids`: the host processes to watch.
   */
  async setup(
    tag: string,
    dirs: { out: string; root: string },
    pids: readonly number[],
  ): Promise<Record<string, string>> {
    this.tag = tag
    return (await this.ask({ op: 'setup', tag, ...dirs, pids })).env as Record<string, string>
  }

  /** Their state; `drain` also reads (and so consumes) the pty, FIFO and socket queues. */
  async inspect(drain: boolean): Promise<HostState> {
    return (await this.ask({ op: 'inspect', drain })).state as HostState
  }

  /** What changed between `before` (not drained) and `after` (drained), one line each; `ignore`: keys that may change. */
  changes(before: HostState, after: HostState, ignore: readonly string[] = []): string[] {
    const changed: string[] = []
    for (const [key, value] of Object.entries(before)) {
      if (ignore.includes(key)) continue
      if (JSON.stringify(after[key]) !== JSON.stringify(value))
        changed.push(`host ${key}: ${JSON.stringify(value)} -> ${JSON.stringify(after[key])}`)
    }
    const drained: HostState = {
      'pty input': `cordon-secret-${this.tag}\n`,
      'pty output': '',
      fifo: '',
      'socket connections': 0,
    }
    for (const [key, expected] of Object.entries(drained)) {
      if (after[key] !== expected)
        changed.push(`host ${key}: ${JSON.stringify(expected)} -> ${JSON.stringify(after[key])}`)
    }
    return changed
  }

  /** Removes the current set. */
  async teardown(): Promise<void> {
    await this.ask({ op: 'teardown' })
  }

  /** Removes the current set and ends the keeper. */
  async close(): Promise<void> {
    await this.teardown()
    this.child.stdin.end()
    await new Promise((resolve) => this.child.once('exit', resolve))
  }
}
