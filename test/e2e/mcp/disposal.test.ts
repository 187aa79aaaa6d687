// A client that goes away mid-run (its in-memory transport closed) with a foreground command
// and a background job running: the server ends both trees, disposes what it was given (the
// sandbox: its session dirs go) and resolves `disposed`. Nothing of the connection survives:
// checked on the host itself, by the processes' command lines in /proc and the dirs on disk.
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { connect, sleepersOf, sessionDirsOf, textOf, uniqueToken } from '../../support/mcp/harness.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { eventually } from '../../support/subprocess/processes.js'

const root = scratchDir('cordon-mcp-gone')

describe('a client that disappears mid-run (in-memory, real sandbox)', () => {
  it('kills the foreground command and the background job, disposes the sandbox, removes its session dirs', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create()
    const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
    let disposedSandbox = false
    const c = await connect({
      executor,
      workspaceRoot: root,
      dispose: async () => {
        await executor.dispose()
        await sandbox.dispose()
        disposedSandbox = true
      },
    })
    const [fg, bg] = [uniqueToken(), uniqueToken()]
    const started = await c.client.callTool({
      name: 'bash',
      arguments: { command: `echo "$TMPDIR"; exec sleep ${bg}`, run_in_background: true },
    })
    const id = (started.structuredContent as { job: { id: string } }).job.id
    const read = await c.client.callTool({ name: 'job_output', arguments: { job_id: id, wait_ms: 200 } })
    const tmp = textOf(read).split('\n')[0]!
    expect(tmp).toContain(`/sessions/${process.pid}-${c.mcp.sessionId}-`)
    expect(existsSync(tmp)).toBe(true)
    expect(sessionDirsOf(process.pid, c.mcp.sessionId)).toHaveLength(1)

    const foreground = c.client.callTool({ name: 'bash', arguments: { command: `exec sleep ${fg}` } })
    foreground.catch(() => undefined)
    expect(await eventually(() => sleepersOf(fg).length === 1 && sleepersOf(bg).length === 1, 10_000)).toBe(true)

    // The client goes: its transport closes, and the server's with it.
    await c.clientTransport.close()
    await expect(foreground).rejects.toThrow(/closed/i)
    await c.mcp.disposed
    expect(disposedSandbox).toBe(true)
    expect(sleepersOf(fg)).toEqual([])
    expect(sleepersOf(bg)).toEqual([])
    expect(existsSync(tmp)).toBe(false)
    expect(sessionDirsOf(process.pid, c.mcp.sessionId)).toEqual([])
  })

  it('a closed connection refuses further calls; close() on an unconnected server still disposes', async (ctx) => {
    await needBackend(ctx, 'landlock')
    let disposed = 0
    const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, graceMs: 500 })
    const c = await connect({ executor, workspaceRoot: root, dispose: { dispose: () => disposed++ } })
    await c.mcp.close()
    await c.mcp.disposed
    expect(disposed).toBe(1)
    await expect(c.client.callTool({ name: 'bash', arguments: { command: 'true' } })).rejects.toThrow()
    const { createMcpServer } = await import('../../../src/mcp/index.js')
    const alone = createMcpServer({ executor, workspaceRoot: root, dispose: () => disposed++ })
    await alone.close()
    await alone.disposed
    expect(disposed).toBe(2)
  })
})
