// LocalSubprocessRuntime against real processes: the seed-003 contract and the reference's
// subprocess scenarios (collection, spill, env, termination, trees, disposal).
import { createHash } from 'node:crypto'
import { spawn as nodeSpawn, spawnSync } from 'node:child_process'
import { createReadStream, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { isAbortedError, isSpawnError } from '../../../src/policy/errors.js'
import { MAX_TIMER_DELAY_MS } from '../../../src/subprocess/spec/schema.js'
import { alive, eventually, pidsIn } from '../../support/subprocess/processes.js'
import { invalid as invalidRequest } from '../../support/invalid.js'
import { scratchDir } from '../../support/scratch.js'

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-rt') })
afterAll(() => runtime.dispose())

const collect = { maxBytes: 1 << 20 }
function spec(argv: readonly string[], extra: Partial<SubprocessSpawnSpec> = {}): SubprocessSpawnSpec {
  return { argv, cwd: '/', stdio: { stdin: 'ignore', stdout: collect, stderr: collect }, graceMs: 2000, ...extra }
}

async function run(argv: string[], extra: Partial<SubprocessSpawnSpec> = {}) {
  const h = runtime.spawn(spec(argv, extra))
  const outcome = await h.done
  return {
    ...outcome,
    stdout: h.collected.stdout?.readFrom(0).text ?? '',
    stderr: h.collected.stderr?.readFrom(0).text ?? '',
    handle: h,
  }
}

const invalid = (fn: () => unknown): string[] => [...invalidRequest(fn).issues]

describe('spawn path', () => {
  it('runs on the path its vitest project asks for (native, or CORDON_SPAWN=portable)', () => {
    expect(runtime.spawnPath.path).toBe(process.env.CORDON_SPAWN === 'portable' ? 'portable' : 'native')
  })
})

describe('validation at the boundary', () => {
  it.each([0, -1, NaN, Infinity, MAX_TIMER_DELAY_MS + 1])('rejects graceMs %s and spawns nothing', (graceMs) => {
    const before = runtime.liveCount
    expect(invalid(() => runtime.spawn(spec(['/bin/true'], { graceMs })))[0]).toMatch(/graceMs/)
    expect(runtime.liveCount).toBe(before)
  })

  it('lists every problem at once', () => {
    const issues = invalid(() =>
      runtime.spawn({ argv: [], cwd: 'relative', stdio: { stdin: 'bogus' }, graceMs: -1 } as never),
    )
    expect(issues.join('\n')).toMatch(/argv/)
    expect(issues.join('\n')).toMatch(/cwd/)
    expect(issues.join('\n')).toMatch(/stdio/)
    expect(issues.join('\n')).toMatch(/graceMs/)
  })

  it('an already-aborted signal throws before spawning', () => {
    const ac = new AbortController()
    ac.abort(new Error('user stop'))
    expect(() => runtime.spawn(spec(['/bin/true'], { signal: ac.signal }))).toThrow(/aborted before spawn: user stop/)
    let thrown: unknown
    try {
      runtime.spawn(spec(['/bin/true'], { signal: ac.signal }))
    } catch (error) {
      thrown = error
    }
    expect(isAbortedError(thrown)).toBe(true)
    expect(thrown).toMatchObject({ code: 'ABORTED', reason: ac.signal.reason })
  })
})

describe('exit facts and output', () => {
  it('reports stdout, stderr and exit codes', async () => {
    const r = await run(['sh', '-c', 'echo out; echo err >&2; exit 3'])
    expect(r).toMatchObject({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n' })
    expect(r.handle.pid).toBeGreaterThan(0)
  })

  it('a self-killed command reports its signal', async () => {
    expect(await run(['sh', '-c', 'kill -TERM $$'])).toMatchObject({ exitCode: null, signal: 'SIGTERM' })
  })

  it('runs in the given cwd with argv verbatim', async () => {
    const r = await run(['sh', '-c', 'pwd; printf "[%s]" "$@"', 'sh', 'a b', '$HOME', "'q'"], { cwd: '/usr' })
    expect(r.stdout).toBe("/usr\n[a b][$HOME]['q']")
  })

  it('a bad cwd rejects done with a SpawnError and pid -1', async () => {
    const h = runtime.spawn(spec(['/bin/true'], { cwd: '/nonexistent-cordon' }))
    expect(h.pid).toBe(-1)
    const error = await h.done.catch((e: unknown) => e)
    expect(isSpawnError(error) && error.stage).toBe('chdir')
    expect(await h.waitForExit()).toBe(true)
  })

  it('a missing program rejects with exec/ENOENT', async () => {
    const error = await runtime.spawn(spec(['no-such-cordon-program'])).done.catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'SpawnError', stage: 'exec', code: 'ENOENT' })
  })
})

describe('stdin', () => {
  it('writes data and closes', async () => {
    expect(
      (
        await run(['sh', '-c', 'cat; echo "[eof]"'], {
          stdio: { stdin: { data: 'abc' }, stdout: collect, stderr: collect },
        })
      ).stdout,
    ).toBe('abc[eof]\n')
  })

  it('ignore is /dev/null; pipe is a pipe the caller owns', async () => {
    expect((await run(['readlink', '/proc/self/fd/0'])).stdout).toBe('/dev/null\n')
    const h = runtime.spawn(
      spec(['sh', '-c', 'readlink /proc/self/fd/0; cat'], {
        stdio: { stdin: 'pipe', stdout: collect, stderr: collect },
      }),
    )
    h.stdin!.end('typed\n')
    await h.done
    // The portable path's pipes are libuv's socket pairs (subprocess/portable/child.ts); the native child's are pipes.
    const kind = runtime.spawnPath.path === 'native' ? 'pipe' : 'socket'
    expect(h.collected.stdout!.readFrom(0).text).toMatch(new RegExp(`^${kind}:\\[\\d+\\]\\ntyped\\n$`))
  })

  it('ignores EPIPE when the child does not read a large stdin', async () => {
    const r = await run(['/bin/true'], {
      stdio: { stdin: { data: 'x'.repeat(4 << 20) }, stdout: collect, stderr: collect },
    })
    expect(r.exitCode).toBe(0)
  })
})

describe('environment', () => {
  it('scrubs credentials and ambient DSH_*, merges explicit entries and tombstones', async () => {
    process.env.CORDON_TEST_API_KEY = 'secret'
    process.env.DSH_AMBIENT = 'stale'
    process.env.CORDON_TEST_PLAIN = 'plain'
    process.env.CORDON_TEST_DROPPED = 'dropme'
    try {
      const r = await run(['/usr/bin/env'], {
        env: { DSH_SESSION_ID: 's1', FORWARDED_TOKEN: 'opt-in', CORDON_TEST_DROPPED: undefined },
      })
      const lines = r.stdout.split('\n')
      expect(lines).toContain('CORDON_TEST_PLAIN=plain')
      expect(lines).toContain('DSH_SESSION_ID=s1')
      expect(lines).toContain('FORWARDED_TOKEN=opt-in')
      expect(r.stdout).not.toMatch(/CORDON_TEST_API_KEY|DSH_AMBIENT|CORDON_TEST_DROPPED/)
      expect(lines.some((l) => l.startsWith('PATH='))).toBe(true)
    } finally {
      delete process.env.CORDON_TEST_API_KEY
      delete process.env.DSH_AMBIENT
      delete process.env.CORDON_TEST_PLAIN
      delete process.env.CORDON_TEST_DROPPED
    }
  })
})

describe('collection and spill', () => {
  it('keeps independent caps per stream and spills the whole stream (0600)', async () => {
    const r = await run(['sh', '-c', 'seq 1 20000; seq 1 10 >&2'], {
      stdio: { stdin: 'ignore', stdout: { maxBytes: 100, spill: { maxBytes: 1 << 20 } }, stderr: { maxBytes: 1000 } },
    })
    const out = r.handle.collected.stdout!.readFrom(0)
    expect(out.lossy).toBe(true)
    expect(out.text.endsWith('19999\n20000\n')).toBe(true)
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(100)
    expect(out.spillPath).toBeDefined()
    expect(statSync(out.spillPath!).mode & 0o777).toBe(0o600)
    const expected = spawnSync('seq', ['1', '20000']).stdout
    expect(await sha256(out.spillPath!)).toBe(createHash('sha256').update(expected).digest('hex'))
    expect(r.handle.collected.stderr!.readFrom(0)).toMatchObject({
      lossy: false,
      text: spawnSync('seq', ['1', '10']).stdout.toString(),
    })
  })

  it('independent readers at different offsets do not consume each other', async () => {
    const h = runtime.spawn(spec(['printf', 'abcdef']))
    await h.done
    const reader = h.collected.stdout!
    expect(reader.readFrom(2)).toMatchObject({ text: 'cdef', nextOffset: 6 })
    expect(reader.readFrom(0)).toMatchObject({ text: 'abcdef', nextOffset: 6 })
    expect(reader.readFrom(6)).toMatchObject({ text: '', nextOffset: 6 })
  })

  it('1 GB through a 64 KB cap with a 1 GB spill cap: spill byte-identical, host RSS bounded', async () => {
    const count = '110000000' // `seq 1 110000000` is 988,888,898 bytes: just under the 1 GiB spill cap
    const expectedHash = new Promise<string>((resolve) => {
      const hash = createHash('sha256')
      const seq = nodeSpawn('seq', ['1', count])
      seq.stdout.on('data', (c: Buffer) => hash.update(c))
      seq.on('close', () => resolve(hash.digest('hex')))
    })
    const expectedDigest = await expectedHash
    const rss0 = process.memoryUsage().rss
    let peak = rss0
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50)
    const r = await run(['seq', '1', count], {
      stdio: { stdin: 'ignore', stdout: { maxBytes: 65536, spill: { maxBytes: 1 << 30 } }, stderr: collect },
    })
    clearInterval(sampler)
    const out = r.handle.collected.stdout!.readFrom(0)
    expect(r.exitCode).toBe(0)
    expect(out.text.endsWith('109999999\n110000000\n')).toBe(true)
    expect(await sha256(out.spillPath!)).toBe(expectedDigest)
    expect(peak - rss0).toBeLessThan(64 << 20)
  }, 180_000)
})

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

describe('termination of trees', () => {
  it('abort sends SIGTERM to the group: grandchildren die too', async () => {
    const ac = new AbortController()
    const h = runtime.spawn(spec(['sh', '-c', 'sleep 100 & sleep 100 & echo $!; wait'], { signal: ac.signal }))
    await eventually(() => h.collected.stdout!.readFrom(0).text.length > 0)
    const grandchild = pidsIn(h.collected.stdout!.readFrom(0).text)[0]!
    ac.abort()
    expect(await h.done).toMatchObject({ signal: 'SIGTERM' })
    expect(await h.waitForExit()).toBe(true)
    expect(alive(grandchild)).toBe(false)
  })

  it('escalates to SIGKILL after grace for a TERM-ignoring tree, within grace', async () => {
    const h = runtime.spawn(spec(['bash', '-c', "trap '' TERM; sleep 100 & echo $!; wait; wait"], { graceMs: 300 }))
    await eventually(() => h.collected.stdout!.readFrom(0).text.length > 0)
    const sleeper = pidsIn(h.collected.stdout!.readFrom(0).text)[0]!
    const t0 = Date.now()
    h.terminate()
    h.terminate() // idempotent
    expect(await h.done).toMatchObject({ signal: 'SIGKILL' })
    expect(await h.waitForExit()).toBe(true)
    const elapsed = Date.now() - t0
    expect(elapsed).toBeGreaterThanOrEqual(250)
    expect(elapsed).toBeLessThan(3000)
    expect(alive(sleeper)).toBe(false)
  })

  it('kills a TERM-trapping descendant left behind after the leader exits', async () => {
    const h = runtime.spawn(
      spec(['bash', '-c', "(trap '' TERM; exec sleep 100) & echo $!"], {
        graceMs: 200,
        stdio: { stdin: 'ignore', stdout: { maxBytes: 1000 }, stderr: 'inherit' },
      }),
    )
    const outcome = await h.done
    expect(outcome.exitCode).toBe(0)
    const leftover = pidsIn(h.collected.stdout!.readFrom(0).text)[0]!
    expect(alive(leftover)).toBe(true)
    const waitAborted = new AbortController()
    setTimeout(() => waitAborted.abort(), 100)
    expect(await h.waitForExit(waitAborted.signal)).toBe(false) // tree still alive: aborted wait
    h.terminate()
    expect(await h.waitForExit()).toBe(true)
    expect(alive(leftover)).toBe(false)
  })

  it('done settles within grace while a descendant holds the pipe', async () => {
    const t0 = Date.now()
    const h = runtime.spawn(spec(['sh', '-c', 'sleep 30 & echo leader-done'], { graceMs: 300 }))
    const outcome = await h.done
    expect(outcome.exitCode).toBe(0)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(h.collected.stdout!.readFrom(0).text).toBe('leader-done\n')
    h.terminate()
    expect(await h.waitForExit()).toBe(true)
  })

  it('terminate is a no-op once the tree is gone', async () => {
    const r = await run(['/bin/true'])
    expect(await r.handle.waitForExit()).toBe(true)
    r.handle.terminate()
    expect(await r.handle.done).toMatchObject({ exitCode: 0 })
  })
})

describe('supervise: descendants that leave the group', () => {
  it('kills a setsid grandchild and a double-forked daemon on terminate', async () => {
    const h = runtime.spawn(
      spec(['bash', '-c', 'setsid sleep 100 & echo $!; (setsid bash -c "sleep 200 & echo \\$!" &) ; sleep 100'], {
        supervise: true,
        graceMs: 500,
      }),
    )
    await eventually(() => pidsIn(h.collected.stdout!.readFrom(0).text).length >= 2)
    const pids = pidsIn(h.collected.stdout!.readFrom(0).text)
    expect(pids.every(alive)).toBe(true)
    h.terminate()
    await h.done
    expect(await h.waitForExit()).toBe(true)
    expect(await eventually(() => !pids.some(alive), 3000)).toBe(true)
  })

  it('reports the command exit (not the tree end) and waits for the tree separately', async () => {
    const h = runtime.spawn(
      spec(['bash', '-c', 'setsid sleep 1 & exit 4'], {
        supervise: true,
        stdio: { stdin: 'ignore', stdout: 'inherit', stderr: 'inherit' },
      }),
    )
    const t0 = Date.now()
    expect(await h.done).toEqual({ exitCode: 4, signal: null })
    expect(Date.now() - t0).toBeLessThan(900)
    expect(await h.waitForExit()).toBe(true)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
  })

  it('a missing program under supervise rejects with exec/ENOENT', async () => {
    const error = await runtime
      .spawn(spec(['no-such-cordon-program'], { supervise: true }))
      .done.catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'SpawnError', stage: 'exec', code: 'ENOENT' })
  })
})

describe('host lifetime', () => {
  const distIndex = join(import.meta.dirname, '..', '..', '..', 'dist', 'index.js')
  const harness = (body: string) => `
    import { LocalSubprocessRuntime } from ${JSON.stringify(distIndex)}
    const rt = new LocalSubprocessRuntime()
    const spec = (argv, extra = {}) => ({ argv, cwd: '/', stdio: { stdin: 'ignore', stdout: { maxBytes: 4096 }, stderr: 'inherit' }, graceMs: 1000, ...extra })
    ${body}`

  function host(body: string) {
    return nodeSpawn(process.execPath, ['--input-type=module', '-e', harness(body)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
  }

  async function firstLine(child: ReturnType<typeof host>): Promise<string> {
    let text = ''
    for await (const chunk of child.stdout!) {
      text += String(chunk)
      if (text.includes('\n')) break
    }
    return text
  }

  it('process.exit of the host kills every live group', async () => {
    const child = host(`
      const h = rt.spawn(spec(['sh', '-c', 'sleep 100 & sleep 100 & echo $$ $!; wait']))
      const t = setInterval(() => { const s = h.collected.stdout.readFrom(0).text; if (s.includes('\\n')) { clearInterval(t); console.log(s.trim()); process.exit(23) } }, 10)`)
    const pids = pidsIn(await firstLine(child))
    const code = await new Promise((r) => child.on('exit', r))
    expect(code).toBe(23)
    expect(pids.length).toBe(2)
    expect(await eventually(() => !pids.some(alive), 3000)).toBe(true)
  })

  it('a SIGKILLed host leaves no supervised descendant behind', async () => {
    const child = host(`
      const h = rt.spawn(spec(['bash', '-c', 'setsid sleep 100 & echo $!; (setsid sleep 100 &); sleep 100'], { supervise: true }))
      const t = setInterval(() => { const s = h.collected.stdout.readFrom(0).text; if (s.includes('\\n')) { clearInterval(t); console.log(h.pid, s.trim()) } }, 10)`)
    const pids = pidsIn(await firstLine(child))
    expect(pids.length).toBe(2)
    expect(pids.every(alive)).toBe(true)
    child.kill('SIGKILL')
    expect(await eventually(() => !pids.some(alive), 5000)).toBe(true)
  })
})

describe('disposal', () => {
  it('terminates every live tree and waits for it', async () => {
    const rt = new LocalSubprocessRuntime()
    const a = rt.spawn(spec(['sleep', '100']))
    const b = rt.spawn(spec(['bash', '-c', "trap '' TERM; sleep 100 & wait"], { graceMs: 200 }))
    const c = rt.spawn(spec(['sleep', '100'], { supervise: true }))
    expect(rt.liveCount).toBe(3)
    await rt.dispose()
    expect(rt.liveCount).toBe(0)
    for (const h of [a, b, c]) expect(alive(h.pid)).toBe(false)
    expect(() => rt.spawn(spec(['/bin/true']))).toThrow(/disposed/)
  })

  it('removes spill files unless keepSpills', async () => {
    const parent = scratchDir('cordon-spills')
    const rt = new LocalSubprocessRuntime({ spillDir: parent })
    const h = rt.spawn(
      spec(['seq', '1', '1000'], {
        stdio: { stdin: 'ignore', stdout: { maxBytes: 10, spill: { maxBytes: 1 << 20 } }, stderr: 'inherit' },
      }),
    )
    await h.done
    expect(h.collected.stdout!.readFrom(0).spillPath).toBeDefined()
    await rt.dispose()
    expect(readdirSync(parent)).toEqual([])
  })
})

describe('resolveExecutable', () => {
  it('resolves bare names, verifies absolute paths, rejects relative ones', async () => {
    expect(await runtime.resolveExecutable('sh')).toMatch(/^\/.*sh$/)
    await expect(runtime.resolveExecutable('/etc/passwd')).rejects.toThrow(/is not an executable file/)
    await expect(runtime.resolveExecutable('no-such-cordon-tool')).rejects.toThrow(/was not found on PATH/)
    await expect(runtime.resolveExecutable('./bin/x')).rejects.toThrow(/relative/)
  })
})
