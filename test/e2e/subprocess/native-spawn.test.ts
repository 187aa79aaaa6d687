// The native spawn core against real processes: exits, signals, pre-exec failure stages, fds.
import { execFileSync, spawnSync } from 'node:child_process'
import { createHook } from 'node:async_hooks'
import { chmodSync, fstatSync, openSync, readdirSync, readlinkSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startChild, type ChildOptions } from '../../../src/subprocess/process/child.js'
import { loadNative, NativeLoadError, packageRoot, Slot } from '../../../src/subprocess/native.js'
import { isSpawnError, type SpawnError } from '../../../src/policy/errors.js'
import { scratchDir } from '../../support/scratch.js'
import { read } from '../../support/sandbox/run-confined.js'
import { eventually } from '../../support/subprocess/processes.js'

const env = Object.entries(process.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]))
const piped = [Slot.Null, Slot.Pipe, Slot.Pipe] as const

async function run(argv: string[], extra: Partial<ChildOptions> = {}) {
  const child = startChild({ argv, env, stdio: piped, ...extra })
  const [stdout, stderr, exit] = await Promise.all([read(child.stdout), read(child.stderr), child.exit])
  return { stdout, stderr, ...exit, pid: child.pid }
}

function spawnFailure(options: ChildOptions): SpawnError {
  try {
    startChild(options)
  } catch (error) {
    if (isSpawnError(error)) return error
    throw error
  }
  throw new Error('spawn unexpectedly succeeded')
}

function hostFds(): number {
  return readdirSync('/proc/self/fd').length
}

describe('native spawn: exits and signals', () => {
  it('reports exit codes and output', async () => {
    expect(await run(['/bin/true'])).toMatchObject({ exitCode: 0, signal: null })
    expect(await run(['sh', '-c', 'echo out; echo err >&2; exit 7'])).toMatchObject({
      exitCode: 7,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
    })
  })

  it('reports a signal death by name', async () => {
    expect(await run(['sh', '-c', 'kill -TERM $$'])).toMatchObject({ exitCode: null, signal: 'SIGTERM' })
    expect(await run(['sh', '-c', 'kill -KILL $$'])).toMatchObject({ exitCode: null, signal: 'SIGKILL' })
  })

  it('signals the leader through its pidfd and reports that signal', async () => {
    const child = startChild({ argv: ['sleep', '30'], env, stdio: [Slot.Null, Slot.Null, Slot.Null] })
    expect(child.running).toBe(true)
    expect(child.kill('SIGINT')).toBe(true)
    expect(await child.exit).toEqual({ exitCode: null, signal: 'SIGINT' })
    expect(child.running).toBe(false)
    expect(child.kill('SIGKILL')).toBe(false)
  })

  it('resets host signal dispositions: Node ignores SIGPIPE, the child does not', async () => {
    const r = await run(['sh', '-c', 'grep -E "^Sig(Ign|Blk)" /proc/self/status'])
    expect(r.stdout).toMatch(/SigBlk:\s+0+\n/)
    expect(r.stdout).toMatch(/SigIgn:\s+0+\n/)
    const pipe = await run(['sh', '-c', 'yes | head -c 1 >/dev/null; echo "${PIPESTATUS:-}"; exit 0'])
    expect(pipe.exitCode).toBe(0)
  })

  it('starts every child as the leader of a new session', async () => {
    const r = await run(['sh', '-c', 'cut -d" " -f6 /proc/$$/stat; echo $$'])
    const [sid, pid] = r.stdout.trim().split('\n')
    expect(sid).toBe(pid)
  })
})

describe('native spawn: failures before exec carry stage and errno', () => {
  const dir = scratchDir('cordon-spawn')
  const notExecutable = join(dir, 'script.sh')
  writeFileSync(notExecutable, '#!/bin/sh\necho hi\n')
  chmodSync(notExecutable, 0o644)

  it('a missing program is exec/ENOENT', () => {
    expect(spawnFailure({ argv: ['/nonexistent/prog'], env, stdio: piped })).toMatchObject({
      stage: 'exec',
      code: 'ENOENT',
      errno: 2,
    })
    expect(spawnFailure({ argv: ['no-such-program-cordon'], env, stdio: piped })).toMatchObject({
      stage: 'exec',
      code: 'ENOENT',
    })
  })

  it('a non-executable file is exec/EACCES', () => {
    expect(spawnFailure({ argv: [notExecutable], env, stdio: piped })).toMatchObject({
      stage: 'exec',
      code: 'EACCES',
      errno: 13,
    })
  })

  it('a missing cwd is chdir/ENOENT, naming the directory', () => {
    const e = spawnFailure({ argv: ['/bin/true'], env, cwd: join(dir, 'missing'), stdio: piped })
    expect(e).toMatchObject({ stage: 'chdir', code: 'ENOENT', path: join(dir, 'missing') })
  })

  it('a cwd that is a file is chdir/ENOTDIR', () => {
    expect(spawnFailure({ argv: ['/bin/true'], env, cwd: notExecutable, stdio: piped })).toMatchObject({
      stage: 'chdir',
      code: 'ENOTDIR',
    })
  })

  it('a bad Landlock ruleset fd is landlock/EBADF', () => {
    const plan = { dropCaps: false, dropBounding: false, capLast: 40, noNewPrivs: true, rulesetFd: 987654 }
    expect(spawnFailure({ argv: ['/bin/true'], env, stdio: piped, confinement: plan })).toMatchObject({
      stage: 'landlock',
      code: 'EBADF',
    })
  })

  it('a malformed seccomp program is seccomp/EINVAL', () => {
    // One instruction that jumps past the end of the program: the kernel rejects it.
    const filter = Buffer.alloc(8)
    filter.writeUInt16LE(0x05, 0) // BPF_JMP|BPF_JA
    filter.writeUInt32LE(5, 4)
    const plan = { dropCaps: false, dropBounding: false, capLast: 40, noNewPrivs: true, filter }
    expect(spawnFailure({ argv: ['/bin/true'], env, stdio: piped, confinement: plan })).toMatchObject({
      stage: 'seccomp',
      code: 'EINVAL',
    })
  })

  it('a cap drop the host may not make is caps/EPERM (unprivileged host)', () => {
    const script = join(dir, 'caps.mjs')
    const child = JSON.stringify(join(packageRoot, 'src/subprocess/native.ts'))
    void child
    writeFileSync(
      script,
      `import { createRequire } from 'node:module'\n` +
        `const require = createRequire(${JSON.stringify(join(packageRoot, 'package.json'))})\n` +
        `const addon = require('node-gyp-build')(${JSON.stringify(packageRoot)})\n` +
        `const r = addon.spawn('/bin/true', ['/bin/true'], [], null, [-1, -1, -1], { dropCaps: true, dropBounding: true, capLast: 40, noNewPrivs: false })\n` +
        `process.stdout.write(JSON.stringify(r))\n`,
    )
    chmodSync(dir, 0o755)
    chmodSync(script, 0o644)
    const out = execFileSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, script],
      { encoding: 'utf8' },
    )
    expect(JSON.parse(out)).toEqual({ stage: 'caps', errno: 1 })
  })

  it('failures leave no zombie and no fd behind', () => {
    const before = hostFds()
    for (let i = 0; i < 50; i++) spawnFailure({ argv: ['/nonexistent'], env, stdio: piped, extra: [Slot.Pipe] })
    for (let i = 0; i < 50; i++) spawnFailure({ argv: ['/bin/true'], env, cwd: '/nonexistent', stdio: piped })
    expect(hostFds()).toBe(before)
    expect(zombieChildren()).toEqual([])
  })
})

function zombieChildren(): string[] {
  const out = spawnSync('ps', ['-o', 'pid=,stat=', '--ppid', String(process.pid)], { encoding: 'utf8' }).stdout
  return out.split('\n').filter((l) => /\sZ/.test(l))
}

describe('native spawn: descriptors', () => {
  it('the child holds exactly its stdio and nothing of the host', async () => {
    const child = startChild({ argv: ['sleep', '5'], env, stdio: [Slot.Null, Slot.Pipe, Slot.Pipe] })
    // sleep briefly opens its own files (locale) at start-up; a host fd would stay for good.
    const fdsOf = () => readdirSync(`/proc/${child.pid}/fd`).sort().join(',')
    await eventually(() => fdsOf() === '0,1,2', 2000)
    expect(fdsOf()).toBe('0,1,2')
    expect(readlinkSync(`/proc/${child.pid}/fd/0`)).toBe('/dev/null')
    expect(readlinkSync(`/proc/${child.pid}/fd/1`)).toMatch(/^pipe:/)
    expect(readlinkSync(`/proc/${child.pid}/fd/2`)).toMatch(/^pipe:/)
    child.kill('SIGKILL')
    await child.exit
    child.stdout?.destroy()
    child.stderr?.destroy()
  })

  it('inherit passes the host fd through; the extra pipe is fd 3', async () => {
    const child = startChild({
      argv: ['sh', '-c', 'echo via-extra >&3; readlink /proc/self/fd/2'],
      env,
      stdio: [Slot.Null, Slot.Pipe, Slot.Inherit],
      extra: [Slot.Pipe],
    })
    const [out, extra] = await Promise.all([read(child.stdout), read(child.extras[0]), child.exit])
    expect(extra).toBe('via-extra\n')
    expect(out.trim()).toBe(readlinkSync('/proc/self/fd/2'))
  })

  it('writes stdin data and closes it', async () => {
    const child = startChild({
      argv: ['sh', '-c', 'cat; echo "[eof]"'],
      env,
      stdio: [Slot.Pipe, Slot.Pipe, Slot.Null],
    })
    child.stdin!.end('hello\nworld\n')
    const [out] = await Promise.all([read(child.stdout), child.exit])
    expect(out).toBe('hello\nworld\n[eof]\n')
  })

  it('500 spawns leave no zombie and no host fd behind', async () => {
    const before = hostFds()
    for (let i = 0; i < 500; i += 10) {
      await Promise.all(Array.from({ length: 10 }, () => run(['/bin/true'])))
    }
    // Sockets close their fds asynchronously after 'close'; give the loop a turn.
    await new Promise((r) => setTimeout(r, 50))
    expect(hostFds()).toBeLessThanOrEqual(before)
    expect(zombieChildren()).toEqual([])
  })

  it('passes the environment exactly', async () => {
    const r = await run(['/usr/bin/env'], { env: ['A=1', 'PATH=/usr/bin:/bin', 'B=two words'] })
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['A=1', 'B=two words', 'PATH=/usr/bin:/bin'])
  })

  it('searches the child PATH, skipping relative entries', async () => {
    const dir = scratchDir('cordon-path')
    writeFileSync(join(dir, 'hello-cordon'), '#!/bin/sh\necho found\n', { mode: 0o755 })
    const r = await run(['hello-cordon'], { env: [`PATH=.:${dir}:/bin`] })
    expect(r.stdout).toBe('found\n')
    expect(spawnFailure({ argv: ['hello-cordon'], env: ['PATH=.'], cwd: dir, stdio: piped })).toMatchObject({
      code: 'ENOENT',
    })
  })
})

describe('addon loader', () => {
  it('names every path it tried and how to build when the binary is missing', () => {
    const empty = scratchDir('cordon-noaddon')
    let error: unknown
    try {
      loadNative(empty)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(NativeLoadError)
    const message = (error as Error).message
    expect(message).toContain(join(empty, 'build', 'Release', 'cordon.node'))
    expect(message).toContain(join(empty, 'prebuilds', `${process.platform}-${process.arch}`))
    expect(message).toContain('npm run build:native')
  })

  it('loads the built addon', () => {
    expect(typeof loadNative().spawn).toBe('function')
    expect(readFileSync(join(packageRoot, 'package.json'), 'utf8')).toContain('"name": "cordon"')
  })
})

describe('native exit watch: a watch that cannot start leaks nothing', () => {
  it('uv_poll_init refuses a descriptor epoll cannot watch: the fd is closed, the callback and async context released', async () => {
    const native = loadNative()
    const file = join(scratchDir('cordon-watch'), 'not-a-pidfd')
    writeFileSync(file, 'x')
    const fd = openSync(file, 'r') // a regular file: epoll_ctl says EPERM, so uv_poll_init fails
    const destroyed: number[] = []
    const created = new Map<number, string>()
    const hook = createHook({
      init(asyncId, type) {
        created.set(asyncId, type)
      },
      destroy(asyncId) {
        if (created.get(asyncId) === 'cordon:exit') destroyed.push(asyncId)
      },
    }).enable()
    let called = false
    try {
      expect(() =>
        native.watch(fd, true, true, () => {
          called = true
        }),
      ).toThrow(expect.objectContaining({ code: 'CORDON_WATCH' }))
      // The watch owned the fd: it is closed, not left open behind a failed watch.
      expect(() => fstatSync(fd)).toThrow(/EBADF/)
      // The async context made for the callback is destroyed (async_hooks report it on a later tick).
      expect(await eventually(() => destroyed.length === 1, 2000)).toBe(true)
      expect([...created.values()].filter((t) => t === 'cordon:exit')).toHaveLength(1)
    } finally {
      hook.disable()
    }
    await new Promise((r) => setTimeout(r, 20))
    expect(called).toBe(false)
  })

  it('control: a watch that starts calls back once with the exit, then releases the same way', async () => {
    const native = loadNative()
    const destroyed: number[] = []
    const created = new Map<number, string>()
    const hook = createHook({
      init(asyncId, type) {
        created.set(asyncId, type)
      },
      destroy(asyncId) {
        if (created.get(asyncId) === 'cordon:exit') destroyed.push(asyncId)
      },
    }).enable()
    try {
      const started = native.spawn('/bin/sh', ['sh', '-c', 'exit 3'], env, null, [...piped], null)
      if (!('pid' in started)) throw new Error(`spawn failed at ${started.stage}`)
      for (const f of started.fds) if (f !== null) native.closeFd(f)
      const exit = await new Promise<[number | null, number | null]>((resolve) =>
        native.watch(started.pidfd, true, true, (code, signal) => resolve([code, signal])),
      )
      expect(exit).toEqual([3, null])
      expect(await eventually(() => destroyed.length === 1, 2000)).toBe(true)
      expect(() => fstatSync(started.pidfd)).toThrow(/EBADF/)
    } finally {
      hook.disable()
    }
  })

  it('stopWatches drops a waiting watch: its exit never calls back, its pidfd is closed', async () => {
    const native = loadNative()
    const started = native.spawn('/bin/sh', ['sh', '-c', 'exit 0'], env, null, [...piped], null)
    if (!('pid' in started)) throw new Error(`spawn failed at ${started.stage}`)
    for (const f of started.fds) if (f !== null) native.closeFd(f)
    let called = false
    native.watch(started.pidfd, true, false, () => {
      called = true
    })
    native.stopWatches()
    // Control: the process did exit (a zombie nobody reaps now: the watch that would is gone).
    const state = () => /\) (\w) /.exec(readFileSync(`/proc/${started.pid}/stat`, 'utf8'))?.[1]
    expect(await eventually(() => state() === 'Z', 3000)).toBe(true)
    await new Promise((r) => setTimeout(r, 50))
    expect(called).toBe(false)
    expect(() => fstatSync(started.pidfd)).toThrow(/EBADF/) // closed once the loop closed the handle
  })
})
