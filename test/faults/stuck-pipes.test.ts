// Faults (issue 28): commands that misuse their pipes. One fills its output pipe and never reads
// the stdin it is given (a 4 MiB string, or a stream that never ends); one closes stdout and
// stderr and keeps running; one leaves grandchildren (one in a new session, deaf to TERM) holding
// the pipes after it exits. Each run settles with the command's own exit, its output and no
// timeout (the timeout is far longer than the executor's grace), unconfined and on each backend;
// a confined run leaves no grandchild. Controls, through Node's own spawn: the command really
// blocks on its full pipe with its stdin unread, EOF really comes before the exit, and a
// grandchild really holds the pipe open.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import type { ShellExecRequest, ShellRunOptions } from '../../src/shell/types.js'
import { createBashTools } from '../../src/tool/toolset.js'
import { LocalSubprocessRuntime } from '../../src/subprocess/runtime.js'
import { needBackend, type SkippableContext, TEST_BACKENDS } from '../support/sandbox/backends.js'
import { alive, eventually, processesMarked } from '../support/subprocess/processes.js'
import { scratchDir } from '../support/scratch.js'

const root = scratchDir('cordon-faults-pipes')
const GRACE_MS = 500
const TIMEOUT_MS = 60_000
const STDIN_BYTES = 4 * 1024 * 1024
const OUT_BYTES = 8 * 1000 * 1000
// Writes OUT_BYTES of "y\n" (never reading its stdin), then exits 5.
const FILLS_PIPE = `yes | head -c ${OUT_BYTES}; exit 5`
const call = { callId: 'c', agent: 'a', sessionId: 's' }

type Where = 'unconfined' | SandboxBackendName
const PLACES: readonly Where[] = ['unconfined', ...TEST_BACKENDS]

// Whatever a failed test left running.
const marks: string[] = []
afterAll(() => {
  for (const mark of marks) for (const pid of processesMarked(mark)) process.kill(pid, 'SIGKILL')
})

/** A fresh env entry that marks every process of one command (the host sees them by it in /proc). */
function newMark(): string {
  const mark = `CORDON_FAULT=${crypto.randomBytes(6).toString('hex')}`
  marks.push(mark)
  return mark
}

/** An executor for `where` (gated), how to run a command on it, and its disposal. */
async function executorFor(ctx: SkippableContext, where: Where) {
  if (where !== 'unconfined') await needBackend(ctx, where)
  const sandbox = where === 'unconfined' ? undefined : await LocalSandbox.create({ backends: [where] })
  const runtime = new LocalSubprocessRuntime()
  const executor = new LocalShellExecutor({
    cwd: root,
    workspaceRoot: root,
    sandbox,
    subprocess: runtime,
    graceMs: GRACE_MS,
    maxOutputBytes: 4096,
    ...(sandbox ? { defaultMode: 'workspace-write' as const } : {}),
  })
  const policy = sandbox ? { sandboxPolicy: { mode: 'workspace-write' as const, workspaceRoot: root } } : {}
  const request = (command: string, more: Partial<ShellExecRequest> = {}) =>
    executor.resolve({ command, timeoutMs: TIMEOUT_MS, ...policy, ...more })
  return {
    executor,
    request,
    run: (command: string, more: Partial<ShellExecRequest> = {}, options?: ShellRunOptions) =>
      executor.run(request(command, more), options),
    dispose: async () => {
      await executor.dispose()
      await runtime.dispose()
      await sandbox?.dispose()
    },
  }
}

/** `{ NAME: value }` of a `NAME=value` mark. */
function envOf(mark: string): Record<string, string> {
  const at = mark.indexOf('=')
  return { [mark.slice(0, at)]: mark.slice(at + 1) }
}

/** A stream of "n\n" that never ends (until destroyed). */
function endless(): Readable {
  return new Readable({
    read() {
      this.push('n\n'.repeat(8192))
    },
  })
}

describe('controls: the commands really misuse their pipes (Node spawn, unconfined)', () => {
  it('the filler blocks on its full output pipe while its 4 MiB stdin stays unread; read, it exits 5', async () => {
    const child = spawn('bash', ['-c', FILLS_PIPE], { stdio: ['pipe', 'pipe', 'ignore'] })
    child.stdin.on('error', () => undefined)
    const closed = new Promise((r) => child.stdout.once('close', r))
    const exited = new Promise((r) => child.once('exit', r))
    child.stdout.pause()
    child.stdin.write(Buffer.alloc(STDIN_BYTES, 'n'))
    await new Promise((r) => setTimeout(r, 1000))
    expect(child.exitCode, 'blocked on its full pipe').toBeNull()
    expect(child.stdin.writableLength, 'its stdin unread').toBeGreaterThan(STDIN_BYTES / 2)
    let read = 0
    child.stdout.on('data', (chunk: Buffer) => {
      read += chunk.length
    })
    child.stdout.resume()
    expect(await exited).toBe(5)
    await closed
    expect(read).toBe(OUT_BYTES)
  })

  it('the closer: its stdout ends before it has finished its work and exited', async () => {
    const marker = path.join(root, 'control-after-close')
    const child = spawn('bash', ['-c', closesStdout(marker)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      out += t
    })
    await new Promise((r) => child.stdout.once('end', r))
    expect(out).toBe('before\n')
    expect(fs.existsSync(marker), 'EOF came first').toBe(false)
    expect(await new Promise((r) => child.once('exit', r))).toBe(6)
    expect(fs.existsSync(marker)).toBe(true)
  })

  it('a grandchild holds the pipe: no EOF after the command exits, until it is gone', async () => {
    const child = spawn('bash', ['-c', 'sleep 300 & echo $!; exit 3'], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    let closed = false
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      out += t
    })
    child.stdout.once('close', () => {
      closed = true
    })
    expect(await new Promise((r) => child.once('exit', r))).toBe(3)
    await new Promise((r) => setTimeout(r, 1000))
    const grandchild = Number(out.trim())
    expect(alive(grandchild)).toBe(true)
    expect(closed, 'the pipe is still open').toBe(false)
    process.kill(grandchild, 'SIGKILL')
    expect(await eventually(() => closed, 5000)).toBe(true)
  })
})

/** bash: says "before", closes stdout and stderr, works on `seconds`, writes `marker`, exits 6. */
function closesStdout(marker: string, seconds = 1): string {
  return `echo before; echo before-err >&2; exec 1>&- 2>&-; sleep ${seconds}; touch ${marker}; exit 6`
}

for (const where of PLACES) {
  describe(`a command that misuses its pipes [${where}]`, () => {
    it('fills its pipe and never reads its 4 MiB stdin: it ends with its exit and its tail', async (ctx) => {
      const x = await executorFor(ctx, where)
      try {
        const result = await x.run(FILLS_PIPE, { stdin: 'n'.repeat(STDIN_BYTES) })
        expect(result).toMatchObject({ exitCode: 5, timedOut: false, aborted: false })
        expect(result.stdout.truncated).toBe(true)
        expect(result.stdout.text).toMatch(/^(y\n)+$/)
        expect(fs.statSync(result.stdout.spillPath!).size).toBe(OUT_BYTES)
      } finally {
        await x.dispose()
      }
    })

    it('fills its pipe and never reads a stdin stream that never ends: it ends with its exit', async (ctx) => {
      const x = await executorFor(ctx, where)
      const stdin = endless()
      try {
        const result = await x.run(FILLS_PIPE, {}, { stdin })
        expect(result).toMatchObject({ exitCode: 5, timedOut: false, aborted: false })
        expect(result.stdout.text).toMatch(/^(y\n)+$/)
      } finally {
        stdin.destroy()
        await x.dispose()
      }
    })

    it('closes stdout and stderr and keeps working: the run ends at its exit, not at EOF', async (ctx) => {
      const x = await executorFor(ctx, where)
      const marker = path.join(root, `after-close-${where}`)
      try {
        const result = await x.run(closesStdout(marker))
        expect(result).toMatchObject({ exitCode: 6, timedOut: false })
        expect(result.stdout.text).toBe('before\n')
        expect(result.stderr.text).toBe('before-err\n')
        expect(fs.existsSync(marker), 'it worked on after closing').toBe(true)
      } finally {
        await x.dispose()
      }
    })

    it('closes stdout and never exits: the timeout ends it, and all it started', async (ctx) => {
      const x = await executorFor(ctx, where)
      const mark = newMark()
      try {
        const result = await x.run('echo before; exec 1>&- 2>&-; sleep 300 & wait', {
          timeoutMs: 3000,
          env: envOf(mark),
        })
        expect(result).toMatchObject({ timedOut: true, exitCode: null })
        expect(result.stdout.text).toBe('before\n')
        expect(await eventually(() => processesMarked(mark).length === 0, 5000)).toBe(true)
      } finally {
        await x.dispose()
      }
    })

    it('a job that closes stdout keeps running, and completes with its exit', async (ctx) => {
      const x = await executorFor(ctx, where)
      const marker = path.join(root, `job-after-close-${where}`)
      const tools = createBashTools({ executor: x.executor, workspaceRoot: root })
      try {
        const command = closesStdout(marker, 3)
        const started = await tools.bash.execute({ command, run_in_background: true }, call)
        const id = started.job!.id
        let text = ''
        let last = ''
        for (let i = 0; i < 50 && !text.includes('before-err'); i++) {
          last = (await tools.jobOutput.execute({ job_id: id, wait_ms: 200 }, call)).content
          text += last
        }
        expect(last, 'still running once its stdout closed').toMatch(/\[status: running\]$/)
        expect(fs.existsSync(marker)).toBe(false)
        for (let i = 0; i < 50 && !text.includes('[status: completed'); i++)
          text += (await tools.jobOutput.execute({ job_id: id, wait_ms: 1000 }, call)).content
        expect(text).toContain('before\n')
        expect(text).toMatch(/\[status: completed, exit code: 6\]$/)
        expect(fs.existsSync(marker)).toBe(true)
      } finally {
        await x.dispose()
      }
    })

    it('grandchildren hold the pipes after it exits: the result settles with its exit, no timeout', async (ctx) => {
      const x = await executorFor(ctx, where)
      const mark = newMark()
      // The setsid one (deaf to TERM) leaves the process group: only a supervisor reaches it.
      const setsid = where === 'unconfined' ? '' : `setsid sh -c 'trap "" TERM; sleep 300; :' &`
      const command = `sleep 300 & ${setsid} sleep 0.2; echo leader-done; exit 3`
      try {
        const result = await x.run(command, { env: envOf(mark) })
        expect(result).toMatchObject({ exitCode: 3, timedOut: false, aborted: false })
        expect(result.stdout.text).toBe('leader-done\n')
        // Confined: the run is over when its tree is. Unconfined: the leftovers get the grace.
        expect(await eventually(() => processesMarked(mark).length === 0, 5000)).toBe(true)
      } finally {
        await x.dispose()
      }
    })
  })
}
