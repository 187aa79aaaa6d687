// One tool instance serves many sessions: each call brings its session's immutable cwd (the
// workspace root of its policy, the base of relative workdirs), its session mode (the baseline
// an escalation must widen) and its session id (DSH_SESSION_ID), and concurrent calls of
// different sessions do not mix.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isInvalidRequestError } from '../../../src/policy/errors.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { ShellEnvRegistry } from '../../../src/shell/env-registry.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import type { ToolExecution } from '../../../src/shell/types.js'
import { createBashTool } from '../../../src/tool/bash-tool.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { InMemoryJobs } from '../../../src/tool/jobs/in-memory.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const elsewhere = scratchDir('cordon-sessions-default')
const dirA = scratchDir('cordon-session-a')
const dirB = scratchDir('cordon-session-b')
mkdirSync(join(dirB, 'sub'))

describe('many sessions, one unsandboxed tool', () => {
  const executor = new LocalShellExecutor({ cwd: elsewhere })
  const registry = new ShellEnvRegistry()
  const seen: ToolExecution[] = []
  registry.register({
    name: 'agent-name',
    variables: [{ key: 'DSH_AGENT', description: 'the agent of the call' }],
    resolve: (execution) => {
      seen.push(execution)
      return execution.agent === undefined ? undefined : { DSH_AGENT: execution.agent }
    },
  })
  const jobs = new InMemoryJobs()
  const set = createBashTools({ executor, shellEnv: registry, jobs })
  afterAll(() => jobs.dispose())

  it('each call runs in its session cwd, with its own DSH_SESSION_ID, also concurrently', async () => {
    const command = 'sleep 0.1; echo "$PWD $DSH_SESSION_ID $DSH_AGENT"'
    const [a, b] = await Promise.all([
      set.bash.execute({ command }, { callId: 'a1', agent: 'alice', sessionId: 'A', cwd: dirA }),
      set.bash.execute({ command }, { callId: 'b1', agent: 'bob', sessionId: 'B', cwd: dirB }),
    ])
    expect(a.content).toBe(`${dirA} A alice\n`)
    expect(b.content).toBe(`${dirB} B bob\n`)
    expect(seen).toEqual(
      expect.arrayContaining([
        { sessionId: 'A', callId: 'a1', agent: 'alice' },
        { sessionId: 'B', callId: 'b1', agent: 'bob' },
      ]),
    )
  })

  it('a relative workdir resolves against the session cwd; no cwd falls back to the tool root', async () => {
    expect((await set.bash.execute({ command: 'pwd', workdir: 'sub' }, { callId: 'b2', cwd: dirB })).content).toBe(
      `${join(dirB, 'sub')}\n`,
    )
    const noCwd = createBashTool({ executor, workspaceRoot: dirA })
    expect((await noCwd.execute({ command: 'pwd' }, { callId: 'x' })).content).toBe(`${dirA}\n`)
  })

  it('background jobs start in the session cwd and stay with their session', async () => {
    const started = await set.bash.execute(
      { command: 'pwd', run_in_background: true },
      { callId: 'b3', agent: 'bob', sessionId: 'B', cwd: dirB },
    )
    expect(started.job).toMatchObject({ workdir: dirB, owner: { sessionId: 'B', agent: 'bob' } })
    const read = await set.jobOutput.execute(
      { job_id: started.job!.id, wait_ms: 5000 },
      { callId: 'b4', agent: 'bob', sessionId: 'B' },
    )
    expect(read.content).toBe(`${dirB}\n\n[status: completed, exit code: 0]`)
    expect(
      (await set.jobOutput.execute({ job_id: started.job!.id }, { callId: 'a2', agent: 'alice', sessionId: 'A' })).code,
    ).toBe('JOB_NOT_FOUND')
  })

  it('a malformed call context is the harness’s bug: InvalidRequestError naming the field', async () => {
    for (const [call, issue] of [
      [{ callId: 7 }, 'callId: must be a string'],
      [{ callId: 'c', cwd: 'relative' }, 'cwd: must be an absolute path, got "relative"'],
      [{ callId: 'c', sessionMode: 'root' }, 'sessionMode: '],
    ] as const) {
      const error = await set.bash.execute({ command: 'true' }, call as never).catch((e: unknown) => e)
      expect(isInvalidRequestError(error)).toBe(true)
      expect((error as { issues: string[] }).issues[0]).toMatch(new RegExp(`^${issue.replace(/[()]/g, '\\$&')}`))
    }
    // A session cwd that is gone is the command's failure to start, told to the model.
    const missing = await set.bash.execute({ command: 'true' }, { callId: 'c', cwd: join(dirA, 'gone') })
    expect(missing).toMatchObject({ isError: true, code: 'SPAWN_FAILED' })
  })
})

describe('many sessions, one sandboxed tool', async () => {
  const usable = await requireBackend('landlock')
  let sandbox: LocalSandbox
  let tool: ReturnType<typeof createBashTool>
  beforeAll(async () => {
    sandbox = await LocalSandbox.create()
    const executor = new LocalShellExecutor({ cwd: elsewhere, workspaceRoot: elsewhere, sandbox })
    tool = createBashTool({ executor, approval: { request: async () => 'rejected' } })
  })
  afterAll(() => sandbox?.dispose())

  it.skipIf(!usable)('each session gets its own root and mode, concurrently', async () => {
    const command = 'sleep 0.1; pwd; echo here > note'
    const [a, b] = await Promise.all([
      tool.execute(
        { command },
        { callId: 'a1', agent: 'x', sessionId: 'A', cwd: dirA, sessionMode: 'workspace-write' },
      ),
      tool.execute({ command }, { callId: 'b1', agent: 'x', sessionId: 'B', cwd: dirB }),
    ])
    expect(a.result).toMatchObject({ exitCode: 0, sandbox: { mode: 'workspace-write', denied: false } })
    expect(a.result?.stdout.text).toBe(`${dirA}\n`)
    expect(existsSync(join(dirA, 'note'))).toBe(true)
    expect(b.result).toMatchObject({ sandbox: { mode: 'read-only', denied: true, deniedPaths: [join(dirB, 'note')] } })
    expect(b.result?.stdout.text).toBe(`${dirB}\n`)
    expect(existsSync(join(dirB, 'note'))).toBe(false)
    // Nothing of the other session's root is writable: A's workspace-write stops at A.
    const cross = await tool.execute(
      { command: `echo x > ${join(dirB, 'from-a')}` },
      { callId: 'a2', agent: 'x', sessionId: 'A', cwd: dirA, sessionMode: 'workspace-write' },
    )
    expect(cross.result?.sandbox?.denied).toBe(true)
  })

  it.skipIf(!usable)("an escalation must widen the calling session's mode, not the tool's default", async () => {
    const args = { command: 'true', sandbox_permissions: 'workspace-write', justification: 'needed' }
    const a = await tool.execute(args, { callId: 'a3', agent: 'x', cwd: dirA, sessionMode: 'workspace-write' })
    expect(a.content).toBe(
      'sandbox escalation to "workspace-write" is not strictly wider than this call\'s current "workspace-write" mode',
    )
    const b = await tool.execute(args, { callId: 'b3', agent: 'x', cwd: dirB })
    expect(b.content).toBe('the user rejected escalating this command to "workspace-write"')
  })
})
