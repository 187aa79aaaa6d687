// Faults (issue 28): the spill file cannot be written. A spill dir on a read-only mount, a spill
// dir on a small tmpfs the stream outgrows (ENOSPC mid-file), and a session's own spill dir in a
// private parent that small: the run completes with its tail, and says the full output is
// unavailable. Nothing is left half-written. Unconfined and on each backend, foreground and as a
// background job. Control: the same runs with a spill dir that has room keep the whole stream.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../src/sandbox/probe.js'
import { renderResult } from '../../src/shell/exit-status.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import { createBashTools } from '../../src/tool/toolset.js'
import { LocalSubprocessRuntime } from '../../src/subprocess/runtime.js'
import { needBackend, type SkippableContext, TEST_BACKENDS } from '../support/sandbox/backends.js'
import { scratchDir } from '../support/scratch.js'
import { fits, smallTmpfs } from './small-tmpfs.js'

const root = scratchDir('cordon-faults-spill')
// seq's 588,895 bytes: far past the 1000-byte tail and the 64 KiB tmpfs.
const LINES = 100_000
const STREAM_BYTES = 588_895
const COMMAND = `seq 1 ${LINES}`
const UNAVAILABLE = '[output truncated; full output: (unavailable)]'
const JOB_UNAVAILABLE = '[some output was dropped from memory; full output: (unavailable)]'
const call = { callId: 'c', agent: 'a', sessionId: 's' }

type Where = 'unconfined' | SandboxBackendName
const PLACES: readonly Where[] = ['unconfined', ...TEST_BACKENDS]

/** An executor for `where` whose spills go to `spillDir` (absent: a confined run's session spill dir). */
async function executorFor(
  ctx: SkippableContext,
  where: Where,
  options: { spillDir?: string; env?: NodeJS.ProcessEnv },
): Promise<{
  executor: LocalShellExecutor
  run: () => ReturnType<LocalShellExecutor['run']>
  dispose(): Promise<void>
}> {
  if (where !== 'unconfined') await needBackend(ctx, where)
  const sandbox =
    where === 'unconfined'
      ? undefined
      : await LocalSandbox.create({ backends: [where], env: options.env ?? process.env })
  const runtime = new LocalSubprocessRuntime()
  const executor = new LocalShellExecutor({
    cwd: root,
    workspaceRoot: root,
    sandbox,
    subprocess: runtime,
    maxOutputBytes: 1000,
    graceMs: 500,
    ...(options.spillDir === undefined ? {} : { spillDir: options.spillDir }),
    ...(sandbox ? { defaultMode: 'read-only' as const } : {}),
  })
  const policy = sandbox ? { sandboxPolicy: { mode: 'read-only' as const, workspaceRoot: root } } : {}
  return {
    executor,
    run: () => executor.run(executor.resolve({ command: COMMAND, ...policy })),
    dispose: async () => {
      await executor.dispose()
      await runtime.dispose()
      await sandbox?.dispose()
    },
  }
}

/** The run finished with its whole tail and no spill file, and says so. */
function expectTailWithoutSpill(result: Awaited<ReturnType<LocalShellExecutor['run']>>): void {
  expect(result.exitCode).toBe(0)
  expect(result.timedOut).toBe(false)
  expect(result.stdout.truncated).toBe(true)
  expect(result.stdout.text.endsWith(`\n${LINES - 1}\n${LINES}\n`)).toBe(true)
  expect(result.stdout.text.length).toBeLessThanOrEqual(1000)
  expect(result.stdout.spillPath).toBeUndefined()
  expect(renderResult(result)).toContain(UNAVAILABLE)
}

/** A background job through the bash tool, read once it has completed. */
async function jobRead(executor: LocalShellExecutor): Promise<string> {
  const tools = createBashTools({ executor, workspaceRoot: root })
  const started = await tools.bash.execute({ command: COMMAND, run_in_background: true }, call)
  expect(started.isError, started.content).toBe(false)
  let read = ''
  for (let i = 0; i < 100 && !/\[status: (completed|killed)/.test(read); i++)
    read = (await tools.jobOutput.execute({ job_id: started.job!.id, wait_ms: 2000 }, call)).content
  return read
}

for (const where of PLACES) {
  describe(`a spill that cannot be written [${where}]`, () => {
    it('control: a spill dir with room keeps the whole stream, and the result names it', async (ctx) => {
      const spillDir = scratchDir('cordon-faults-spill-room')
      const x = await executorFor(ctx, where, { spillDir })
      try {
        const result = await x.run()
        expect(result.stdout.truncated).toBe(true)
        expect(result.stdout.spillPath).toBeDefined()
        expect(path.dirname(result.stdout.spillPath!)).toBe(spillDir)
        expect(fs.statSync(result.stdout.spillPath!).size).toBe(STREAM_BYTES)
        expect(renderResult(result)).not.toContain('(unavailable)')
      } finally {
        await x.dispose()
      }
    })

    it('a spill dir on a read-only mount: the run completes with its tail, the spill unavailable', async (ctx) => {
      const spillDir = smallTmpfs(ctx, 'cordon-faults-spill-ro', { bytes: 1024 * 1024, readOnly: true })
      expect(fits(spillDir, 1), 'the mount refuses writes').toBe(false)
      const x = await executorFor(ctx, where, { spillDir })
      try {
        expectTailWithoutSpill(await x.run())
        expect(await jobRead(x.executor)).toContain(
          `\n${LINES}\n\n${JOB_UNAVAILABLE}\n[status: completed, exit code: 0]`,
        )
      } finally {
        await x.dispose()
      }
    })

    it('a spill dir on a full disk (a 64 KiB tmpfs): the tail, the spill unavailable, no partial file left', async (ctx) => {
      const spillDir = smallTmpfs(ctx, 'cordon-faults-spill-full')
      expect(fits(spillDir, 4096), 'the tmpfs takes a small file').toBe(true)
      expect(fits(spillDir, STREAM_BYTES), 'but not the stream').toBe(false)
      const x = await executorFor(ctx, where, { spillDir })
      try {
        expectTailWithoutSpill(await x.run())
        expect(await jobRead(x.executor)).toContain(JOB_UNAVAILABLE)
        expect(fs.readdirSync(spillDir)).toEqual([])
      } finally {
        await x.dispose()
      }
    })
  })
}

for (const backend of TEST_BACKENDS) {
  describe(`a session's own spill dir on a full disk [${backend}]`, () => {
    it('control: with room, the spill lies in the session dir of the private parent', async (ctx) => {
      const parent = scratchDir('cordon-faults-parent-room')
      fs.chmodSync(parent, 0o700)
      const x = await executorFor(ctx, backend, { env: { ...process.env, CORDON_PRIVATE_DIR: parent } })
      try {
        const result = await x.run()
        expect(result.stdout.spillPath?.startsWith(`${parent}/sessions/`)).toBe(true)
        expect(fs.statSync(result.stdout.spillPath!).size).toBe(STREAM_BYTES)
      } finally {
        await x.dispose()
      }
    })

    it('the private parent a 64 KiB tmpfs: the run completes confined with its tail, the spill unavailable', async (ctx) => {
      const parent = smallTmpfs(ctx, 'cordon-faults-parent-small')
      const x = await executorFor(ctx, backend, { env: { ...process.env, CORDON_PRIVATE_DIR: parent } })
      try {
        const result = await x.run()
        expectTailWithoutSpill(result)
        expect(result.sandbox?.backend).toBe(backend)
        const sessions = fs.readdirSync(path.join(parent, 'sessions'))
        expect(sessions.length).toBe(1)
        const spilled = fs.readdirSync(path.join(parent, 'sessions', sessions[0]!, 'spill'))
        expect(spilled.filter((name) => name.endsWith('.log'))).toEqual([])
      } finally {
        await x.dispose()
      }
    })
  })
}
