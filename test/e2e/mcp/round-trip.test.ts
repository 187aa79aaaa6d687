// cordon's tools through the SDK's own Client over an in-memory transport, against a real
// LocalSandbox: tools/list serves each tool's own input schema and an output schema, and every
// result carries its facts as structuredContent beside the text. The Client checks each
// structuredContent against the tool's outputSchema with ajv and throws on a mismatch, so every
// call here (errors included) proves that the two agree.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outputSchemaOf } from '../../../src/mcp/index.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { type Connected, connect, sleepersOf, textOf, uniqueToken } from '../../support/mcp/harness.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { eventually } from '../../support/subprocess/processes.js'

const root = scratchDir('cordon-mcp-rt')
const outside = scratchDir('cordon-mcp-rt-out')

describe('cordon over MCP (in-memory, real sandbox)', () => {
  let sandbox: LocalSandbox
  let executor: LocalShellExecutor
  let c: Connected
  beforeAll(async () => {
    sandbox = await LocalSandbox.create()
    executor = new LocalShellExecutor({
      cwd: root,
      workspaceRoot: root,
      sandbox,
      defaultMode: 'workspace-write',
      graceMs: 500,
    })
    c = await connect({ executor, workspaceRoot: root })
  })
  afterAll(async () => {
    await c?.mcp.close()
    await executor?.dispose()
    await sandbox?.dispose()
  })

  it('lists every tool of the set with its own input schema, an output schema where it has one', async () => {
    const { tools } = await c.client.listTools()
    const set = createBashTools({ executor, workspaceRoot: root })
    const served = [...set.tools, set.refusals]
    expect(tools.map((t) => t.name)).toEqual(['bash', 'job_output', 'job_kill', 'sandbox_refusals'])
    for (const tool of served) {
      const listed = tools.find((t) => t.name === tool.name)
      expect(listed?.inputSchema).toEqual(tool.inputSchema)
      expect(listed?.description).toBe(tool.description)
      expect(listed?.outputSchema).toEqual(outputSchemaOf(tool.name))
    }
    for (const name of ['bash', 'job_output', 'job_kill'])
      expect(tools.find((t) => t.name === name)?.outputSchema).toMatchObject({
        type: 'object',
        additionalProperties: false,
      })
    // A tool without an output schema is served with text only.
    expect(tools.find((t) => t.name === 'sandbox_refusals')).not.toHaveProperty('outputSchema')
  })

  it('a run: the text a model reads, and the run facts as structuredContent', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const r = await c.client.callTool({ name: 'bash', arguments: { command: 'echo out; echo err >&2; exit 3' } })
    expect(r.isError).toBe(false)
    expect(textOf(r)).toBe('out\n[stderr]\nerr\n\n[exit code: 3]')
    expect(r.structuredContent).toEqual({
      run: {
        exitCode: 3,
        signal: null,
        timedOut: false,
        aborted: false,
        timeoutMs: expect.any(Number),
        stdout: { truncated: false },
        stderr: { truncated: false },
        sandbox: expect.objectContaining({ mode: 'workspace-write', denied: false, backend: expect.any(String) }),
      },
    })
  })

  it('a sandbox denial: the marker in the text, the denied facts in structuredContent, nothing written', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const target = join(outside, 'denied')
    const r = await c.client.callTool({ name: 'bash', arguments: { command: `echo x > ${target}` } })
    expect(r.isError).toBe(false)
    expect(textOf(r)).toContain('[sandbox: file access denied under workspace-write mode]')
    expect(r.structuredContent).toMatchObject({
      run: { sandbox: { mode: 'workspace-write', denied: true, deniedFor: ['files'], deniedPaths: [target] } },
    })
    expect(existsSync(target)).toBe(false)
    // The refusal log has it too, read through sandbox_refusals: text only.
    const log = await c.client.callTool({ name: 'sandbox_refusals', arguments: {} })
    expect(log.isError).toBe(false)
    expect(log).not.toHaveProperty('structuredContent')
    expect(textOf(log)).toContain(`write refused: ${target}`)
  })

  it('a timeout and truncation are facts too: timedOut, signal, a spill path', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const r = await c.client.callTool({
      name: 'bash',
      arguments: { command: 'head -c 200000 /dev/zero | tr "\\0" a; sleep 30', timeout_ms: 1500 },
    })
    const run = (r.structuredContent as { run: Record<string, unknown> }).run
    expect(run).toMatchObject({ timedOut: true, timeoutMs: 1500, stdout: { truncated: true } })
    expect(typeof (run.stdout as { spillPath?: unknown }).spillPath).toBe('string')
    expect(textOf(r)).toContain('[timed out after 1500ms]')
  })

  it('a background job through job_output and job_kill, its state in structuredContent', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const token = uniqueToken()
    const started = await c.client.callTool({
      name: 'bash',
      arguments: { command: `echo ready; exec sleep ${token}`, run_in_background: true },
    })
    expect(started.structuredContent).toMatchObject({ job: { status: 'running', callId: expect.any(String) } })
    const id = (started.structuredContent as { job: { id: string } }).job.id
    let seen = ''
    for (let i = 0; i < 100 && !seen.includes('ready'); i++) {
      const read = await c.client.callTool({ name: 'job_output', arguments: { job_id: id, wait_ms: 50 } })
      expect(read.structuredContent).toMatchObject({ job: { id, status: 'running' } })
      seen += textOf(read)
    }
    expect(seen).toContain('ready')
    expect(await eventually(() => sleepersOf(token).length === 1)).toBe(true)
    const killed = await c.client.callTool({ name: 'job_kill', arguments: { job_id: id } })
    expect(killed.structuredContent).toMatchObject({
      job: { id, status: 'killed', signal: 'SIGTERM', exitCode: null, sandbox: { denied: false } },
    })
    expect(textOf(killed)).toMatch(/\[status: killed, signal: SIGTERM\]$/)
    expect(sleepersOf(token)).toEqual([])
  })

  it('errors: isError with the code in structuredContent (still checked against the schema)', async () => {
    const bad = await c.client.callTool({ name: 'bash', arguments: { command: '' } })
    expect(bad).toMatchObject({ isError: true, structuredContent: { code: 'INVALID_ARGUMENTS' } })
    const none = await c.client.callTool({ name: 'job_output', arguments: { job_id: 'job-999' } })
    expect(none).toMatchObject({ isError: true, structuredContent: { code: 'JOB_NOT_FOUND' } })
    expect(textOf(none)).toContain('no background job "job-999"')
    await expect(c.client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/unknown tool "nope"/)
  })
})
