// Faults (issue 28): cordon's private parent on a full disk (a tmpfs filled to its last block and
// inode), so a session's private dirs cannot be made. Each confined way in (a foreground run, a
// background job, the bash tool, a terminal) is refused with SANDBOX_UNAVAILABLE naming the
// private directory and ENOSPC, and nothing runs: the marker the command would write never
// appears. Control: the same calls with a private parent that has room run and write it.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isSandboxUnavailableError } from '../../src/policy/errors.js'
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import { createBashTools } from '../../src/tool/toolset.js'
import { LocalSubprocessRuntime } from '../../src/subprocess/runtime.js'
import { needBackend, type SkippableContext, TEST_BACKENDS } from '../support/sandbox/backends.js'
import { scratchDir } from '../support/scratch.js'
import { fillUp, smallTmpfs } from './small-tmpfs.js'

const call = { callId: 'c', agent: 'a', sessionId: 's' }

/** What each way in did: the error it met (undefined: it ran) and whether its marker was written. */
interface Attempt {
  error: unknown
  wrote: boolean
}

/** Every confined way in, each writing its own marker in a fresh workspace, with `parent` as the private parent. */
async function attempts(backend: SandboxBackendName, parent: string): Promise<Record<string, Attempt>> {
  const root = scratchDir(`cordon-faults-parent-${backend}`)
  const sandbox = await LocalSandbox.create({
    backends: [backend],
    env: { ...process.env, CORDON_PRIVATE_DIR: parent },
  })
  const runtime = new LocalSubprocessRuntime()
  const executor = new LocalShellExecutor({
    cwd: root,
    workspaceRoot: root,
    sandbox,
    subprocess: runtime,
    defaultMode: 'workspace-write',
  })
  const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
  const marker = (name: string) => path.join(root, `ran-${name}`)
  const touch = (name: string) => `touch ${marker(name)}`
  const out: Record<string, Attempt> = {}
  const attempt = async (name: string, body: () => Promise<unknown>) => {
    let error: unknown
    try {
      error = await body()
    } catch (thrown) {
      error = thrown
    }
    out[name] = { error, wrote: fs.existsSync(marker(name)) }
  }
  try {
    await attempt('run', async () => {
      await executor.run(executor.resolve({ command: touch('run'), sandboxPolicy: policy }))
    })
    await attempt('job', async () => {
      const job = executor.start(executor.resolve({ command: touch('job'), sandboxPolicy: policy }))
      await job.done
      return job.status === 'completed' ? undefined : job.readOutput().delta
    })
    await attempt('tool', async () => {
      const tools = createBashTools({ executor, workspaceRoot: root })
      const r = await tools.bash.execute({ command: touch('tool') }, call)
      return r.isError ? r : undefined
    })
    await attempt('terminal', async () => {
      const spec = { argv: ['sh', '-c', touch('terminal')], cwd: root, cols: 80, rows: 24, graceMs: 500 }
      const terminal = await runtime.spawnTerminal(sandbox.confineTerminal(spec, policy).spec)
      await terminal.done
      await terminal.terminate()
    })
  } finally {
    await executor.dispose()
    await runtime.dispose()
    await sandbox.dispose()
  }
  return out
}

/** Skips unless `backend` is usable here; the private parent's tmpfs, full or with room. */
async function parentFor(ctx: SkippableContext, backend: SandboxBackendName, full: boolean): Promise<string> {
  await needBackend(ctx, backend)
  const parent = smallTmpfs(ctx, `cordon-faults-parent-${full ? 'full' : 'room'}`, {
    bytes: 1024 * 1024,
    inodes: 64,
  })
  if (full)
    expect(fillUp(parent), 'the tmpfs is full to the last block and inode').toEqual({
      blocks: 'ENOSPC',
      inodes: 'ENOSPC',
    })
  return parent
}

for (const backend of TEST_BACKENDS) {
  describe(`the private parent on a full disk [${backend}]`, () => {
    it('control: with room, each way in runs confined and writes its marker', async (ctx) => {
      const parent = await parentFor(ctx, backend, false)
      const outcome = await attempts(backend, parent)
      for (const [name, a] of Object.entries(outcome)) {
        expect(a.error, name).toBeUndefined()
        expect(a.wrote, name).toBe(true)
      }
      expect(Object.keys(outcome)).toEqual(['run', 'job', 'tool', 'terminal'])
    })

    it('full: every way in is SANDBOX_UNAVAILABLE naming the private dir and ENOSPC, and nothing runs', async (ctx) => {
      const parent = await parentFor(ctx, backend, true)
      const outcome = await attempts(backend, parent)
      expect(Object.keys(outcome)).toEqual(['run', 'job', 'tool', 'terminal'])
      for (const name of ['run', 'job', 'terminal']) {
        const error = outcome[name]!.error
        expect(isSandboxUnavailableError(error), `${name}: ${String(error)}`).toBe(true)
        expect((error as Error).message).toContain(`${parent}/sessions ENOSPC`)
        expect((error as Error).message).toContain('refusing to run the command unconfined')
        expect((error as Error).message).toContain('CORDON_PRIVATE_DIR')
      }
      // The tool answers with the refusal's code.
      expect(outcome.tool!.error).toMatchObject({ isError: true, code: 'SANDBOX_UNAVAILABLE' })
      expect((outcome.tool!.error as { content: string }).content).toContain('ENOSPC')
      for (const [name, a] of Object.entries(outcome)) expect(a.wrote, `${name} ran`).toBe(false)
    })
  })
}
