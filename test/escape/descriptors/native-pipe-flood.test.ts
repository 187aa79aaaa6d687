// Attacker's pass 4: collected output is read natively (native/pipe-reader.cc, NativePipe) into
// one buffer both streams share. A confined command that floods both streams at once, closes and
// reopens its output fds, or leaves a descendant (in a new session) holding the pipes must not
// make the host hang, lose or mix bytes, or leak fds. Controls: the same generator run unconfined
// gives the same bytes (the digests are the command's, not an artefact); unconfined, the
// descendant really holds the pipe open (a reader waiting for EOF would wait for it).
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const MB = 1024 * 1024
const FLOOD_BYTES = 6 * MB
// Writes FLOOD_BYTES of numbered lines to each of stdout and stderr, interleaved, in odd-sized writes.
const FLOOD = `
import os
def gen(tag):
    i = 0; n = 0; parts = []
    while n < ${FLOOD_BYTES}:
        line = b'%s %08d ' % (tag, i) + b'x' * (i % 97) + b'\\n'; parts.append(line); n += len(line); i += 1
    return b''.join(parts)[:${FLOOD_BYTES}]
o, e = gen(b'OUT'), gen(b'ERR')
step = 4093
for k in range(0, ${FLOOD_BYTES}, step):
    os.write(1, o[k:k+step]); os.write(2, e[k:k+step])
`

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' }

/**
 * A fresh sandbox and runtime for `backend`, warmed by two confined runs of `true` (the ruleset
 * cache and the read view's inotify keep an fd from then on), and the host's fd count after them,
 * so fd counts compare runs only.
 */
async function warmed(
  backend: SandboxBackendName,
  policy: Parameters<LocalSandbox['confine']>[1],
  specOf: (argv: string[]) => SubprocessSpawnSpec,
) {
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  const rt = new LocalSubprocessRuntime()
  /** `sh -c script`, confined. */
  const sh = (script: string) => rt.spawn(sandbox.confine(specOf(['sh', '-c', script]), policy).spec)
  for (let i = 0; i < 2; i++) await rt.spawn(sandbox.confine(specOf(['true']), policy).spec).done
  const before = await fdCount()
  const dispose = async () => {
    await sandbox.dispose()
    await rt.dispose()
  }
  return { sandbox, rt, sh, before, dispose }
}

/** /proc/self/fd's count, after the loop has settled. */
async function fdCount(): Promise<number> {
  await new Promise((r) => setTimeout(r, 200))
  return fs.readdirSync('/proc/self/fd').length
}

describe('controls', () => {
  it('the flood, unconfined, writes the same bytes to each stream every time', () => {
    const a = spawnSync('python3', ['-c', FLOOD], { maxBuffer: 64 * MB })
    const b = spawnSync('python3', ['-c', FLOOD], { maxBuffer: 64 * MB })
    expect(a.stdout.length).toBe(FLOOD_BYTES)
    expect(a.stderr.length).toBe(FLOOD_BYTES)
    expect(sha(a.stdout)).toBe(sha(b.stdout))
    expect(sha(a.stdout)).not.toBe(sha(a.stderr))
  })

  it('unconfined, a descendant in a new session holds the output pipe open after its parent exits', async () => {
    const child = spawn('sh', ['-c', 'setsid sleep 30 & echo $!'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let closed = false
    let pid = ''
    child.stdout.on('data', (d: Buffer) => {
      pid += String(d)
    })
    child.on('close', () => {
      closed = true
    })
    await new Promise((r) => child.once('exit', r))
    await new Promise((r) => setTimeout(r, 2000))
    expect(closed, 'the pipe closed although the descendant lives').toBe(false)
    process.kill(Number(pid.trim()), 'SIGKILL') // the descendant, by its pid
  })
})

for (const backend of TEST_BACKENDS)
  describe(`${backend}: collected output under attack`, () => {
    const ws = scratchDir(`cordon-rt4-pipe-${backend}`)
    const policy = { mode: 'workspace-write' as const, workspaceRoot: ws, sessionId: 'rt4-pipe' }
    const collect = { maxBytes: 16 * MB }
    const spec = (argv: string[], chunks?: Record<'stdout' | 'stderr', Buffer[]>): SubprocessSpawnSpec => ({
      argv,
      cwd: ws,
      env: ENV,
      stdio: { stdin: 'ignore', stdout: collect, stderr: collect },
      graceMs: 500,
      ...(chunks
        ? { onOutput: (chunk: Buffer, stream: 'stdout' | 'stderr') => chunks[stream].push(Buffer.from(chunk)) }
        : {}),
    })

    it('both streams flooded at once arrive whole and unmixed, and no fd is left', async (ctx) => {
      await needBackend(ctx, backend)
      const expected = spawnSync('python3', ['-c', FLOOD], { maxBuffer: 64 * MB })
      const { sandbox, rt, before, dispose } = await warmed(backend, policy, spec)
      for (let round = 0; round < 3; round++) {
        const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] }
        const handle = rt.spawn(sandbox.confine(spec(['python3', '-c', FLOOD], chunks), policy).spec)
        expect((await handle.done).exitCode).toBe(0)
        const out = Buffer.concat(chunks.stdout)
        const err = Buffer.concat(chunks.stderr)
        expect(out.length).toBe(FLOOD_BYTES)
        expect(err.length).toBe(FLOOD_BYTES)
        expect(sha(out), 'stdout arrived as written').toBe(sha(expected.stdout))
        expect(sha(err), 'stderr arrived as written').toBe(sha(expected.stderr))
        expect(handle.collected.stdout?.readFrom(FLOOD_BYTES - 20).text).toBe(expected.stdout.subarray(-20).toString())
      }
      expect(await fdCount()).toBeLessThanOrEqual(before)
      await dispose()
    }, 120_000)

    it('a descendant in a new session holding the pipes: the run ends with its command, and its bytes are kept', async (ctx) => {
      await needBackend(ctx, backend)
      const { sh, before, dispose } = await warmed(backend, policy, spec)
      const started = Date.now()
      const handle = sh(
        'setsid sh -c "sleep 0.3; echo late-from-descendant; sleep 60" & (setsid sleep 60 &) ; echo from-command; exit 7',
      )
      const outcome = await handle.done
      expect(outcome.exitCode).toBe(7)
      expect(Date.now() - started, 'the host waited for the descendant').toBeLessThan(30_000)
      expect(handle.collected.stdout?.readFrom(0).text).toMatch(/^from-command\n/)
      expect(await handle.waitForExit()).toBe(true)
      expect(await fdCount()).toBeLessThanOrEqual(before)
      await dispose()
    }, 60_000)

    it('a command that closes its output fds, reopens them elsewhere and goes on: the run ends at its exit', async (ctx) => {
      await needBackend(ctx, backend)
      const { sh, before, dispose } = await warmed(backend, policy, spec)
      const handle = sh(
        'echo first; echo e1 >&2; exec 1>&- 2>&-; sleep 1; exec 1>"$TMPDIR/o" 2>&1; echo after; head -c 5000000 /dev/zero; exit 3',
      )
      const outcome = await handle.done
      expect(outcome.exitCode).toBe(3)
      expect(handle.collected.stdout?.readFrom(0).text).toBe('first\n')
      expect(handle.collected.stderr?.readFrom(0).text).toBe('e1\n')
      expect(await fdCount()).toBeLessThanOrEqual(before)
      await dispose()
    }, 60_000)
  })
