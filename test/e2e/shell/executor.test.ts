// LocalShellExecutor against real processes and the real sandbox: the reference's bash-local
// and bash-sandbox scenarios (defaults, caps, deadlines, background jobs, sandbox facts).
import { spawn as nodeSpawn } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isInvalidRequestError, isSandboxUnavailableError } from '../../../src/policy/errors.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { ShellEnvRegistry } from '../../../src/shell/env-registry.js'
import type { ToolExecution } from '../../../src/shell/types.js'
import { defaultSubprocessRuntime, disposeDefaultSubprocessRuntime } from '../../../src/subprocess/default-runtime.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { MAX_TIMER_DELAY_MS } from '../../../src/subprocess/spec/limits.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { alive, eventually, pidsIn } from '../../support/subprocess/processes.js'
import { invalid } from '../../support/invalid.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-exec')
const outside = scratchDir('cordon-outside')

describe('unsandboxed executor: defaults and caps', () => {
  const ex = new LocalShellExecutor({ cwd: root, graceMs: 500 })
  afterAll(() => ex.dispose())

  it('fills defaults from config and caps the timeout', () => {
    const spec = ex.resolve({ command: 'true' })
    expect(spec).toMatchObject({ workdir: root, timeoutMs: 120_000, stdoutMaxBytes: 64_000, sandboxPolicy: undefined })
    expect(ex.resolve({ command: 'true', timeoutMs: 10_000_000 }).timeoutMs).toBe(600_000)
    expect(ex.resolve({ command: 'true', workdir: '/usr' }).workdir).toBe('/usr')
    expect(ex.resolve({ command: 'true', stdoutMaxBytes: 1_000_000 }).stdoutMaxBytes).toBe(1_000_000)
    expect(ex.sandboxMode).toBeUndefined()
    expect(new LocalShellExecutor().config.cwd).toBe(process.cwd())
  })

  it('rejects a bad timeout and bad options clearly', () => {
    for (const timeoutMs of [0, -5, NaN, Infinity]) {
      expect(invalid(() => ex.resolve({ command: 'true', timeoutMs })).issues).toEqual([
        'request.timeoutMs: must be a positive finite number',
      ])
    }
    expect(invalid(() => ex.resolve({ command: 'true', stdoutMaxBytes: 1.5 })).issues).toEqual([
      'request.stdoutMaxBytes: must be a positive whole number of bytes',
    ])
    let error: unknown
    try {
      new LocalShellExecutor({ timeoutMs: -1, graceMs: 0, cwd: 'relative' })
    } catch (e) {
      error = e
    }
    expect(isInvalidRequestError(error)).toBe(true)
    const issues = (error as { issues: string[] }).issues.join('\n')
    expect(issues).toMatch(/timeoutMs/)
    expect(issues).toMatch(/graceMs/)
    expect(issues).toMatch(/cwd/)
  })

  it('no timeout above what a timer holds: refused in the options and in a hand-made spec, capped in a request', async () => {
    // Node fires a longer delay after 1 ms: a run would be "timed out" at once, or after exit 0.
    for (const options of [{ timeoutMs: 3_000_000_000 }, { maxTimeoutMs: 99_999_999_999_999 }]) {
      expect(invalid(() => new LocalShellExecutor({ cwd: root, ...options })).issues).toEqual([
        `${Object.keys(options)[0]}: must be at most ${MAX_TIMER_DELAY_MS}`,
      ])
    }
    const widest = new LocalShellExecutor({
      cwd: root,
      timeoutMs: MAX_TIMER_DELAY_MS,
      maxTimeoutMs: MAX_TIMER_DELAY_MS,
    })
    expect(widest.resolve({ command: 'true', timeoutMs: 3_000_000_000 }).timeoutMs).toBe(MAX_TIMER_DELAY_MS)
    const handMade = { ...ex.resolve({ command: 'true' }), timeoutMs: 3_000_000_000 }
    await expect(ex.run(handMade)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      issues: [`spec.timeoutMs: must be a positive number of ms, at most ${MAX_TIMER_DELAY_MS}`],
    })
    // The control: the largest delay a timer holds runs, and the command ends on its own.
    const r = await widest.run(widest.resolve({ command: 'true' }))
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, timeoutMs: MAX_TIMER_DELAY_MS })
    await widest.dispose()
  })

  it('runs bash -c with output, exit code and the effective timeout', async () => {
    const r = await ex.run(ex.resolve({ command: 'echo out; echo err >&2; exit 5', timeoutMs: 30_000 }))
    expect(r).toMatchObject({ exitCode: 5, signal: null, timedOut: false, aborted: false, timeoutMs: 30_000 })
    expect(r.stdout).toEqual({ text: 'out\n', truncated: false })
    expect(r.stderr).toEqual({ text: 'err\n', truncated: false })
    expect(r.sandbox).toBeUndefined()
  })

  it('threads stdin, env and dshEnv (dshEnv last), with the fixed shell env', async () => {
    const r = await ex.run(
      ex.resolve({
        command: 'cat; echo "$NO_COLOR $TERM $PAGER $GIT_PAGER $MINE $DSH_X"',
        stdin: 'in:',
        env: { MINE: 'mine', DSH_X: 'from-env' },
        dshEnv: { DSH_X: 'from-dsh' },
      }),
    )
    expect(r.stdout.text).toBe('in:1 dumb cat cat mine from-dsh\n')
  })

  it('collects the managed DSH_* snapshot from the registry when the spec has none', async () => {
    const registry = new ShellEnvRegistry()
    const withRegistry = new LocalShellExecutor({ cwd: root, env: registry })
    const r = await withRegistry.run(withRegistry.resolve({ command: 'echo "$DSH_SHELL"' }))
    await withRegistry.dispose()
    expect(r.stdout.text).toBe('1\n')
  })

  it('collects DSH_* from the execution the call describes, also unsandboxed and in the background', async () => {
    const registry = new ShellEnvRegistry()
    const seen: ToolExecution[] = []
    registry.register({
      name: 'call-probe',
      variables: [{ key: 'DSH_CALL', description: 'the calling agent and tool call' }],
      resolve: (execution) => {
        seen.push(execution)
        return { DSH_CALL: `${execution.agent}/${execution.callId}` }
      },
    })
    const withRegistry = new LocalShellExecutor({ cwd: root, env: registry })
    const execution = { sessionId: 's-1', callId: 'call-9', agent: 'planner' }
    const command = 'echo "$DSH_SESSION_ID $DSH_CALL"'
    const r = await withRegistry.run(withRegistry.resolve({ command, execution }))
    expect(r.stdout.text).toBe('s-1 planner/call-9\n')
    const job = withRegistry.start(withRegistry.resolve({ command, execution }))
    await job.done
    expect(job.readOutput().delta).toBe('s-1 planner/call-9\n')
    expect(seen).toEqual([execution, execution])
    await withRegistry.dispose()
  })

  it('truncates stdout at stdoutMaxBytes with a spill path', async () => {
    const r = await ex.run(ex.resolve({ command: 'seq 1 100000', stdoutMaxBytes: 1000 }))
    expect(r.stdout.truncated).toBe(true)
    expect(r.stdout.text.endsWith('100000\n')).toBe(true)
    expect(existsSync(r.stdout.spillPath!)).toBe(true)
  })

  it('times out a command that traps TERM and exits 0: timedOut, not aborted', async () => {
    const r = await ex.run(ex.resolve({ command: "trap 'exit 0' TERM; sleep 30 & wait", timeoutMs: 200 }))
    expect(r).toMatchObject({ timedOut: true, aborted: false, exitCode: 0 })
  })

  it('an abort is aborted, not timedOut; a self-kill is neither', async () => {
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 100)
    const r = await ex.run(ex.resolve({ command: 'sleep 30', signal: ac.signal }))
    expect(r).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGTERM' })
    const self = await ex.run(ex.resolve({ command: 'kill -TERM $$' }))
    expect(self).toMatchObject({ aborted: false, timedOut: false, signal: 'SIGTERM' })
  })

  it('an abort racing the timeout reports the single first cause', async () => {
    for (let i = 0; i < 10; i++) {
      const ac = new AbortController()
      setTimeout(() => ac.abort(), 100)
      const r = await ex.run(ex.resolve({ command: 'sleep 30', timeoutMs: 100, signal: ac.signal }))
      expect(r.timedOut !== r.aborted).toBe(true)
    }
  })

  it('a pre-aborted signal resolves aborted without spawning; a bad workdir rejects', async () => {
    const ac = new AbortController()
    ac.abort(new Error('stop'))
    const marker = join(root, 'pre-aborted-run')
    const r = await ex.run(ex.resolve({ command: `touch ${marker}`, signal: ac.signal, timeoutMs: 5000 }))
    expect(r).toEqual({
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: true,
      timeoutMs: 5000,
      stdout: { text: '', truncated: false },
      stderr: { text: '', truncated: false },
    })
    expect(existsSync(marker)).toBe(false)
    await expect(ex.run(ex.resolve({ command: 'true', workdir: join(root, 'missing') }))).rejects.toMatchObject({
      name: 'SpawnError',
      stage: 'chdir',
    })
  })

  it('a foreground run terminates what it left running graceMs after the leader exits', async () => {
    const r = await ex.run(ex.resolve({ command: "(trap '' TERM; exec sleep 60) >/dev/null 2>&1 & echo $!" }))
    const leftover = pidsIn(r.stdout.text)[0]!
    expect(alive(leftover)).toBe(true)
    expect(await eventually(() => !alive(leftover), 5000)).toBe(true)
  })

  it('streams output in arrival order', async () => {
    const chunks: string[] = []
    const r = await ex.run(ex.resolve({ command: 'echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c' }), {
      onOutput: (chunk, stream) => chunks.push(`${stream}:${chunk}`),
    })
    expect(chunks).toEqual(['stdout:a\n', 'stderr:b\n', 'stdout:c\n'])
    expect(r.stdout.text).toBe('a\nc\n')
  })

  describe('background', () => {
    it('settles completed; reads consume; stderr is a marked section', async () => {
      const p = ex.start(ex.resolve({ command: 'printf out; printf err >&2; exit 3' }))
      expect(p.status).toBe('running')
      await p.done
      expect(p).toMatchObject({ status: 'completed', exitCode: 3, signal: null })
      expect(p.readOutput()).toEqual({ delta: 'out\n[stderr]\nerr', lossy: false })
      expect(p.readOutput()).toEqual({ delta: '', lossy: false })
      expect(p.sandbox).toBeUndefined()
    })

    it('kill() is true once then false; the status is killed; a daemon does not outlive it', async () => {
      const p = ex.start(ex.resolve({ command: 'setsid sleep 100 & echo $!; sleep 100' }))
      let text = ''
      expect(
        await eventually(() => {
          text += p.readOutput().delta
          return pidsIn(text).length > 0
        }),
      ).toBe(true)
      const daemon = pidsIn(text)[0]!
      expect(alive(daemon)).toBe(true)
      expect(p.kill()).toBe(true)
      expect(p.kill()).toBe(false)
      await p.done
      expect(p.status).toBe('killed')
      expect(await eventually(() => !alive(daemon), 5000)).toBe(true)
    })

    it('a self-signal settles as killed; a spawn failure settles as killed with the note once', async () => {
      const self = ex.start(ex.resolve({ command: 'kill -KILL $$' }))
      await self.done
      expect(self).toMatchObject({ status: 'killed', signal: 'SIGKILL' })
      const bad = ex.start(ex.resolve({ command: 'true', workdir: join(root, 'missing') }))
      await bad.done
      expect(bad.status).toBe('killed')
      // Once, in the [stderr] section, saying what failed where (not "spawn failed: spawn failed at").
      expect(bad.readOutput().delta).toBe(`[stderr]\nspawn failed: chdir: ENOENT (${join(root, 'missing')})\n`)
      expect(bad.readOutput().delta).toBe('')
    })

    it('a job aborted through its signal settles killed, even when it traps TERM and exits 0', async () => {
      const ac = new AbortController()
      const p = ex.start(ex.resolve({ command: "trap 'exit 0' TERM; echo ready; sleep 100 & wait", signal: ac.signal }))
      let text = ''
      expect(
        await eventually(() => {
          text += p.readOutput().delta
          return text.includes('ready')
        }),
      ).toBe(true)
      ac.abort()
      await p.done
      expect(p).toMatchObject({ status: 'killed', exitCode: 0, signal: null })
    })

    it('start() with an aborted signal returns at once; done settles killed with the reason on stderr', async () => {
      const ac = new AbortController()
      ac.abort(new Error('the user pressed stop'))
      const marker = join(root, 'pre-aborted-ran')
      const p = ex.start(ex.resolve({ command: `touch ${marker}`, signal: ac.signal }))
      await p.done
      expect(p).toMatchObject({ status: 'killed', exitCode: null, signal: null })
      expect(p.kill()).toBe(false)
      expect(p.readOutput()).toEqual({ delta: '[stderr]\naborted before spawn: the user pressed stop\n', lossy: false })
      expect(p.readOutput().delta).toBe('')
      expect(existsSync(marker)).toBe(false)
    })

    it('lossy reads point at the spill path', async () => {
      const small = new LocalShellExecutor({ cwd: root, maxOutputBytes: 100 })
      const p = small.start(small.resolve({ command: 'seq 1 10000' }))
      await p.done
      const read = p.readOutput()
      expect(read.lossy).toBe(true)
      expect(existsSync(read.stdoutSpillPath!)).toBe(true)
      await small.dispose()
    })

    it('an executor-only reload leaves jobs running; disposing the shared default runtime kills them', async () => {
      const own = new LocalShellExecutor({ cwd: root, graceMs: 200 })
      expect(own.subprocess).toBe(defaultSubprocessRuntime())
      const p = own.start(own.resolve({ command: "trap '' TERM; echo $$; sleep 100 & wait" }))
      let text = ''
      await eventually(() => {
        text += p.readOutput().delta
        return pidsIn(text).length > 0
      })
      await own.dispose()
      await new Promise((r) => setTimeout(r, 300))
      expect(p.status).toBe('running')
      expect(alive(pidsIn(text)[0]!)).toBe(true)
      await disposeDefaultSubprocessRuntime()
      await p.done
      expect(p.status).toBe('killed')
      expect(alive(pidsIn(text)[0]!)).toBe(false)
      // The next executor (and this one) spawn on a fresh shared runtime.
      expect((await own.run(own.resolve({ command: 'echo again' }))).stdout.text).toBe('again\n')
    })

    it('background jobs survive disposal of an executor that does not own the runtime', async () => {
      const runtime = new LocalSubprocessRuntime()
      const borrowed = new LocalShellExecutor({ cwd: root, subprocess: runtime })
      const p = borrowed.start(borrowed.resolve({ command: 'sleep 0.3; echo survived' }))
      await borrowed.dispose()
      await p.done
      expect(p.readOutput().delta).toBe('survived\n')
      await runtime.dispose()
    })
  })
})

describe('the shared default runtime is disposed with the host', () => {
  it('a host that exits without disposing leaves no job and no spill file behind', async () => {
    const tmp = scratchDir('cordon-host-tmp')
    const executorModule = join(import.meta.dirname, '..', '..', '..', 'src', 'shell', 'executor.ts')
    const source = `
      import { LocalShellExecutor } from ${JSON.stringify(executorModule)}
      const ex = new LocalShellExecutor({ cwd: '/', maxOutputBytes: 1000 })
      const job = ex.start(ex.resolve({ command: 'echo $$ >&2; seq 1 200000; sleep 100' }))
      let text = ''
      let spill
      const t = setInterval(() => {
        const read = job.readOutput()
        text += read.delta
        spill ??= read.stdoutSpillPath
        const pid = /\\[stderr\\]\\n(\\d+)\\n/.exec(text)?.[1]
        if (pid !== undefined && spill !== undefined) {
          clearInterval(t)
          console.log(JSON.stringify({ pid: Number(pid), spill }))
          process.exit(0)
        }
      }, 10)`
    const hooks = join(import.meta.dirname, '..', '..', 'fixtures', 'ts-hooks.mjs')
    const child = nodeSpawn(process.execPath, ['--import', hooks, '--input-type=module', '-e', source], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, CORDON_PRIVATE_DIR: tmp },
    })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += String(chunk)
    })
    const code = await new Promise((r) => child.on('exit', r))
    expect(code).toBe(0)
    const { pid, spill } = JSON.parse(out) as { pid: number; spill: string }
    expect(spill.startsWith(tmp)).toBe(true)
    expect(await eventually(() => !alive(pid), 5000)).toBe(true)
    expect(existsSync(spill)).toBe(false)
    expect(readdirSync(tmp).filter((name) => name.startsWith('cordon-spill-'))).toEqual([])
  })
})

describe('sandboxed executor: facts of every run', async () => {
  const usable = await requireBackend('landlock')
  let sandbox: LocalSandbox
  let ex: LocalShellExecutor
  beforeAll(async () => {
    sandbox = await LocalSandbox.create()
    ex = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
  })
  afterAll(async () => {
    await ex?.dispose()
    await sandbox?.dispose()
  })

  it.skipIf(!usable)('defaults to read-only: a denial is a fact with its path; the file does not exist', async () => {
    expect(ex.sandboxMode).toBe('read-only')
    const target = join(outside, 'denied.txt')
    const r = await ex.run(ex.resolve({ command: `echo x > ${target}` }))
    expect(r.exitCode).not.toBe(0)
    expect(r.sandbox).toEqual({
      mode: 'read-only',
      denied: true,
      enforcement: 'full',
      backend: 'landlock',
      deniedPaths: [target],
      deniedFor: ['files'],
      refusedPaths: [target],
      refusalSource: 'messages',
    })
    expect(existsSync(target)).toBe(false)
  })

  it.skipIf(!usable)('exit 0 is never denied; a clean read is not denied', async () => {
    const r = await ex.run(ex.resolve({ command: `touch ${join(outside, 'x')} 2>/dev/null; ls / >/dev/null` }))
    expect(r.exitCode).toBe(0)
    expect(r.sandbox?.denied).toBe(false)
  })

  it.skipIf(!usable)(
    'an explicit workspace-write policy writes inside the root, reports the chosen backend, and still denies outside',
    async () => {
      const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
      const chosen = sandbox.choose(policy)
      const inside = await ex.run(
        ex.resolve({ command: 'echo ok > inside.txt && cat inside.txt', sandboxPolicy: policy }),
      )
      expect(inside).toMatchObject({ exitCode: 0, stdout: { text: 'ok\n' } })
      // Landlock alone is partial here; with bubblewrap in the chain it is chosen, and full.
      expect(inside.sandbox).toMatchObject({
        mode: 'workspace-write',
        denied: false,
        backend: chosen.backend,
        enforcement: chosen.enforcement,
      })
      const out = await ex.run(ex.resolve({ command: `touch ${join(outside, 'w')}`, sandboxPolicy: policy }))
      expect(out.sandbox).toMatchObject({ mode: 'workspace-write', denied: true, deniedPaths: [join(outside, 'w')] })
    },
  )

  it.skipIf(!usable)('TMPDIR is a private writable temp dir, and the host /tmp is not writable', async () => {
    const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
    const r = await ex.run(
      ex.resolve({
        command: 'echo t > "$TMPDIR/t" && cat "$TMPDIR/t"; echo "$TMPDIR"; echo h > /tmp/cordon-host-tmp-probe',
        sandboxPolicy: policy,
      }),
    )
    expect(r.stdout.text.split('\n')[0]).toBe('t')
    expect(r.stdout.text.split('\n')[1]).not.toBe('/tmp')
    expect(existsSync('/tmp/cordon-host-tmp-probe')).toBe(false)
    expect(r.sandbox?.denied).toBe(true)
  })

  it.skipIf(!usable)('danger-full-access bypasses the sandbox and carries no enforcement', async () => {
    const target = join(outside, 'full.txt')
    const r = await ex.run(
      ex.resolve({ command: `echo x > ${target}`, sandboxPolicy: { mode: 'danger-full-access', workspaceRoot: root } }),
    )
    expect(r.exitCode).toBe(0)
    expect(r.sandbox).toEqual({ mode: 'danger-full-access', denied: false })
    expect(existsSync(target)).toBe(true)
  })

  it.skipIf(!usable)('a signal death is never a denial; exit 126/127 are ordinary', async () => {
    const r = await ex.run(ex.resolve({ command: `touch ${join(outside, 's')}; kill -TERM $$` }))
    expect(r.sandbox?.denied).toBe(false)
    const missing = await ex.run(ex.resolve({ command: 'no-such-cordon-cmd' }))
    expect(missing.exitCode).toBe(127)
    expect(missing.sandbox?.denied).toBe(false)
  })

  it.skipIf(!usable)(
    'background denials are stamped before done resolves; 50 overlapping jobs keep their own facts',
    async () => {
      const modes = ['read-only', 'workspace-write', 'danger-full-access'] as const
      const jobs = Array.from({ length: 50 }, (_, i) => {
        const mode = modes[i % 3]!
        const target = join(outside, `job-${i}`)
        return {
          i,
          mode,
          target,
          p: ex.start(
            ex.resolve({
              command: `sleep 0.0${i % 10}; echo ${i} > ${target}`,
              sandboxPolicy: { mode, workspaceRoot: root },
            }),
          ),
        }
      })
      await Promise.all(jobs.map((j) => j.p.done))
      for (const j of jobs) {
        if (j.mode === 'danger-full-access') {
          expect(j.p.sandbox).toBeUndefined()
          expect(existsSync(j.target)).toBe(true)
        } else {
          expect(j.p.sandbox).toMatchObject({ mode: j.mode, denied: true, deniedPaths: [j.target] })
          expect(existsSync(j.target)).toBe(false)
        }
      }
    },
  )

  it.skipIf(!usable)('BASH_ENV is evaluated inside the confinement', async () => {
    const rc = join(root, 'rc.sh')
    writeFileSync(rc, `echo from-rc > ${join(outside, 'rc-out')}\n`)
    const r = await ex.run(ex.resolve({ command: 'true', env: { BASH_ENV: rc } }))
    expect(r.stderr.text).toMatch(/Permission denied|Read-only file system/)
    expect(existsSync(join(outside, 'rc-out'))).toBe(false)
  })

  it.skipIf(!usable)(
    'a runner failure throws SANDBOX_UNAVAILABLE in the foreground and stamps runnerFailed in the background',
    async () => {
      // A real confinement step that the kernel refuses: the plan names a ruleset fd that is not one.
      const broken = {
        confine(spec: Parameters<LocalSandbox['confine']>[0], policy: Parameters<LocalSandbox['confine']>[1]) {
          const confined = sandbox.confine(spec, policy)
          const c = confined.spec.confinement!
          return {
            ...confined,
            spec: {
              ...confined.spec,
              confinement: { ...c, steps: { ...c.steps!, ruleset: { fd: 999_999, closed: false } } },
            },
          }
        },
      }
      const failing = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox: broken })
      const target = join(outside, 'runner-failed')
      const error = await failing
        .run(failing.resolve({ command: `echo x > ${target}; echo 'Permission denied' >&2; exit 1` }))
        .catch((e: unknown) => e)
      expect(isSandboxUnavailableError(error)).toBe(true)
      expect((error as { detail: unknown }).detail).toEqual({ stage: 'landlock', errno: 9 })
      const job = failing.start(failing.resolve({ command: `echo x > ${target}` }))
      await job.done
      expect(job.status).toBe('killed')
      expect(job.sandbox).toMatchObject({ mode: 'read-only', denied: false, runnerFailed: true })
      expect(job.readOutput().delta).toMatch(/^\[stderr\]\nspawn failed: .*refusing to run the command unconfined/)
      expect(existsSync(target)).toBe(false)
      await failing.dispose()
    },
  )

  it('an unusable sandbox fails closed on run and start: SANDBOX_UNAVAILABLE, nothing run', async () => {
    const none = await LocalSandbox.create({
      capabilities: {
        platform: 'linux',
        chain: ['landlock'],
        backends: {
          landlock: {
            backend: 'landlock',
            usable: false,
            reason: 'probe found no Landlock',
            remedy: 'enable Landlock',
            limitations: [],
          },
        },
      } as never,
    })
    const closed = new LocalShellExecutor({ cwd: root, sandbox: none })
    const target = join(outside, 'never')
    const error = await closed.run(closed.resolve({ command: `echo x > ${target}` })).catch((e: unknown) => e)
    expect(isSandboxUnavailableError(error)).toBe(true)
    expect(() => closed.start(closed.resolve({ command: `echo x > ${target}` }))).toThrow(
      /refusing to run the command unconfined/,
    )
    // An already-aborted call stays a cancellation, not a sandbox error.
    const ac = new AbortController()
    ac.abort()
    const cancelled = closed.start(closed.resolve({ command: `echo x > ${target}`, signal: ac.signal }))
    await cancelled.done
    expect(cancelled.status).toBe('killed')
    expect(cancelled.readOutput().delta).toMatch(/^\[stderr\]\naborted before spawn: /)
    // So does a foreground one: it resolves aborted, and no sandbox was asked.
    const aborted = await closed.run(closed.resolve({ command: `echo x > ${target}`, signal: ac.signal }))
    expect(aborted).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: null })
    expect(aborted.sandbox).toBeUndefined()
    expect(existsSync(target)).toBe(false)
    await closed.dispose()
    await none.dispose()
  })
})
