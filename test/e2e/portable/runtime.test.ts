// The portable spawn path's own facts (the shared suite, test/e2e/subprocess/runtime.test.ts, runs on it as well, as
// the `portable` vitest project): failures before exec carry the native child's stages; a
// supervised run is `cordon-exec init`, a child of the host, with no launcher; a Landlock plan
// fails closed and runs nothing; a missing wrapper is the sandbox's failure; bubblewrap runs
// through it with the real exit facts, signals and grace of cordon-exec inside.
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isSandboxUnavailableError, isSpawnError } from '../../../src/policy/errors.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { runnerFailureToError } from '../../../src/sandbox/verdict.js'
import { launcherPids } from '../../../src/subprocess/launcher/launch.js'
import { helperPath } from '../../../src/subprocess/native.js'
import { startPortableChild } from '../../../src/subprocess/portable/child.js'
import { portableKindOf } from '../../../src/subprocess/portable/spawner.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { alive, eventually, pidsIn } from '../../support/subprocess/processes.js'
import { scratchDir } from '../../support/scratch.js'

const portable = new LocalSubprocessRuntime({ spawnPath: 'portable' })
const native = new LocalSubprocessRuntime({ spawnPath: 'native' })
afterAll(() => Promise.all([portable.dispose(), native.dispose()]))

const collect = { maxBytes: 1 << 16 }
function spec(argv: readonly string[], extra: Partial<SubprocessSpawnSpec> = {}): SubprocessSpawnSpec {
  return { argv, cwd: '/', stdio: { stdin: 'ignore', stdout: collect, stderr: collect }, graceMs: 2000, ...extra }
}

async function failure(rt: LocalSubprocessRuntime, s: SubprocessSpawnSpec) {
  const h = rt.spawn(s)
  const error = await h.done.then(
    () => undefined,
    (e: unknown) => e,
  )
  return { pid: h.pid, error }
}

/** The parent pid of `pid`, from /proc. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
}

describe('portable: which path, and why', () => {
  it('a forced runtime says so; an automatic one here uses the addon', () => {
    expect(portable.spawnPath).toMatchObject({ path: 'portable', forced: true })
    expect(portable.spawnPath.reason).toMatch(/forced/)
    expect(native.spawnPath.path).toBe('native')
    expect(native.spawnPath.reason).toMatch(/cordon\.node/)
  })
})

describe('portable: failures before exec carry the native stages', () => {
  const dir = scratchDir('cordon-portable-fail')
  const script = join(dir, 'not-executable')
  writeFileSync(script, '#!/bin/sh\necho hi\n')
  chmodSync(script, 0o644)
  const cases: Array<[string, SubprocessSpawnSpec, string, string]> = [
    ['a missing program', spec(['no-such-cordon-program']), 'exec', 'ENOENT'],
    ['a file that is not executable', spec([script]), 'exec', 'EACCES'],
    ['a missing cwd', spec(['/bin/true'], { cwd: join(dir, 'nowhere') }), 'chdir', 'ENOENT'],
    ['a cwd that is a file', spec(['/bin/true'], { cwd: script }), 'chdir', 'ENOTDIR'],
  ]
  it.each(cases)('%s: the same stage and errno as the native child, pid -1', async (_what, s, stage, code) => {
    const control = await failure(native, s)
    expect(control.error).toMatchObject({ name: 'SpawnError', stage, code })
    const got = await failure(portable, s)
    expect(got.pid).toBe(-1)
    expect(got.error).toMatchObject({ name: 'SpawnError', stage, code })
  })
})

describe('portable: supervised runs go through cordon-exec init', () => {
  it('the tree root is cordon-exec init, a child of the host, and no launcher is started', async () => {
    const helper = helperPath()
    expect(helper).toBeDefined()
    const launchers = launcherPids().length
    const h = portable.spawn(spec(['sh', '-c', 'echo $PPID; sleep 30'], { supervise: true, graceMs: 500 }))
    await eventually(() => h.collected.stdout!.readFrom(0).text.includes('\n'))
    const cmdline = readFileSync(`/proc/${h.pid}/cmdline`, 'latin1').split('\0')
    expect(cmdline.slice(0, 2)).toEqual([helper, 'init'])
    expect(parentOf(h.pid)).toBe(process.pid)
    expect(pidsIn(h.collected.stdout!.readFrom(0).text)).toEqual([h.pid]) // the command's parent is init
    expect(launcherPids().length).toBe(launchers)
    h.terminate()
    expect(await h.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
    expect(await h.waitForExit()).toBe(true)
  })

  it('without a helper a supervised run is its process group; a Landlock plan stays refused', () => {
    const supervised = spec(['true'], { supervise: true })
    expect(portableKindOf(supervised, undefined)).toBe('direct')
    expect(portableKindOf(supervised, '/x/cordon-exec')).toBe('launched')
    const landlock = { ...spec(['true']), confinement: { backend: 'landlock' as const, mode: 'read-only' as const } }
    expect(portableKindOf(landlock, undefined)).toBe('launched')
  })

  it('the spawn primitive refuses any confinement plan at launcher (nothing runs in its place)', () => {
    const dir = scratchDir('cordon-portable-plan')
    const marker = join(dir, 'ran')
    let error: unknown
    try {
      startPortableChild({
        argv: ['/bin/sh', '-c', `echo ran > ${marker}`],
        env: ['PATH=/usr/bin:/bin'],
        stdio: [-1, -1, -1],
        confinement: { dropCaps: true, dropBounding: false, capLast: 40, noNewPrivs: true },
      })
    } catch (e) {
      error = e
    }
    expect(error).toMatchObject({ name: 'SpawnError', stage: 'launcher', code: 'ENOSYS' })
    expect(existsSync(marker)).toBe(false)
  })
})

describe('portable: a Landlock plan fails closed', async () => {
  const usable = await requireBackend('landlock')
  it.skipIf(!usable)(
    'the native runtime runs it (control); the portable one refuses it at launcher, running nothing',
    async () => {
      const sandbox = await LocalSandbox.create({ backends: ['landlock'] })
      try {
        const root = scratchDir('cordon-portable-landlock')
        const confined = sandbox.confine(spec(['/bin/sh', '-c', 'echo ran > "$TMPDIR/marker"; echo ran']), {
          mode: 'read-only',
          workspaceRoot: root,
        })
        expect(confined.backend).toBe('landlock')
        const marker = join(confined.tempDir!, 'marker')
        const control = native.spawn(confined.spec)
        expect(await control.done).toEqual({ exitCode: 0, signal: null })
        expect(existsSync(marker)).toBe(true)
        rmSync(marker)
        const got = await failure(portable, confined.spec)
        expect(got.pid).toBe(-1)
        expect(got.error).toMatchObject({ name: 'SpawnError', stage: 'launcher', code: 'ENOSYS' })
        expect(existsSync(marker)).toBe(false)
        const surfaced = runnerFailureToError(got.error, 'read-only')
        expect(isSandboxUnavailableError(surfaced)).toBe(true)
      } finally {
        await sandbox.dispose()
      }
    },
  )
})

describe('portable: a wrapper that is missing is the sandbox’s failure', () => {
  it('a Seatbelt spec where /usr/bin/sandbox-exec does not exist fails at launcher, not exec', async () => {
    expect(existsSync('/usr/bin/sandbox-exec')).toBe(false)
    const s: SubprocessSpawnSpec = {
      ...spec(['/usr/bin/sandbox-exec', '-p', '(version 1)(allow default)', '--', '/bin/true']),
      confinement: { backend: 'seatbelt', mode: 'read-only' },
    }
    const got = await failure(portable, s)
    expect(got.pid).toBe(-1)
    expect(isSpawnError(got.error) && got.error.stage).toBe('launcher')
    expect(isSandboxUnavailableError(runnerFailureToError(got.error, 'read-only'))).toBe(true)
  })
})

describe('portable: bubblewrap through node:child_process', async () => {
  const usable = await requireBackend('bubblewrap')
  const sandbox = usable ? await LocalSandbox.create({ backends: ['bubblewrap'] }) : undefined
  afterAll(() => sandbox?.dispose())
  const root = scratchDir('cordon-portable-bwrap')
  const outside = scratchDir('cordon-portable-bwrap-out')

  it.skipIf(!usable)(
    'denies a write outside the root that succeeds unconfined (control), with the real exit',
    async () => {
      const target = join(outside, 'attack')
      const attack = spec(['/bin/sh', '-c', `echo x > ${target}; echo in > ${root}/ok; exit 3`], { cwd: root })
      const control = portable.spawn(attack)
      expect(await control.done).toEqual({ exitCode: 3, signal: null })
      expect(existsSync(target)).toBe(true)
      rmSync(target)
      const confined = sandbox!.confine(attack, { mode: 'workspace-write', workspaceRoot: root })
      expect(confined).toMatchObject({ backend: 'bubblewrap', enforcement: 'full' })
      const h = portable.spawn(confined.spec)
      expect(await h.done).toEqual({ exitCode: 3, signal: null })
      expect(await h.waitForExit()).toBe(true)
      expect(existsSync(target)).toBe(false)
      expect(readFileSync(join(root, 'ok'), 'utf8')).toBe('in\n')
      expect(h.collected.stderr!.readFrom(0).text).toMatch(/Read-only file system/)
    },
  )

  it.skipIf(!usable)(
    'terminate reaches the command through cordon-exec inside: TERM, then KILL after the grace',
    async () => {
      const polite = portable.spawn(
        sandbox!.confine(spec(['/bin/sh', '-c', 'echo up; sleep 30']), { mode: 'read-only', workspaceRoot: root }).spec,
      )
      await eventually(() => polite.collected.stdout!.readFrom(0).text === 'up\n')
      polite.terminate()
      expect(await polite.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
      expect(await polite.waitForExit()).toBe(true)

      const stubborn = portable.spawn(
        sandbox!.confine(spec(['/bin/sh', '-c', "trap '' TERM; echo up; sleep 30 & wait"], { graceMs: 300 }), {
          mode: 'read-only',
          workspaceRoot: root,
        }).spec,
      )
      await eventually(() => stubborn.collected.stdout!.readFrom(0).text === 'up\n')
      const t0 = Date.now()
      stubborn.terminate()
      expect(await stubborn.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
      expect(await stubborn.waitForExit()).toBe(true)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
      expect(alive(stubborn.pid)).toBe(false)
    },
  )
})

describe.each([
  ['native', native],
  ['portable', portable],
] as const)('%s: ordered events', (_path, rt) => {
  it('every chunk reaches onOutput in order, each stream whole, before done settles', async () => {
    const lines = 3000
    const chunks: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] }
    let settled = false
    let late = 0
    const h = rt.spawn(
      spec(['sh', '-c', `i=0; while [ $i -lt ${lines} ]; do echo "o$i"; echo "e$i" >&2; i=$((i+1)); done`], {
        onOutput: (chunk, stream) => {
          if (settled) late++
          chunks[stream].push(chunk.toString('latin1'))
        },
      }),
    )
    expect(await h.done).toEqual({ exitCode: 0, signal: null })
    settled = true
    const want = (p: string) => Array.from({ length: lines }, (_, i) => `${p}${i}\n`).join('')
    expect(chunks.stdout.join('')).toBe(want('o'))
    expect(chunks.stderr.join('')).toBe(want('e'))
    expect(h.collected.stdout!.readFrom(0).text).toBe(want('o'))
    expect(h.collected.stderr!.readFrom(0).text).toBe(want('e'))
    await new Promise((r) => setTimeout(r, 50))
    expect(late).toBe(0)
  })

  it('an abort signal that times out ends the tree with SIGTERM', async () => {
    const h = rt.spawn(spec(['sh', '-c', 'sleep 30 & wait'], { signal: AbortSignal.timeout(200) }))
    expect(await h.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
    expect(await h.waitForExit()).toBe(true)
  })
})
