// `cordon mcp` as a client runs it: `node bin/cordon.js mcp` over stdio, driven by the SDK's own
// Client and StdioClientTransport. One round trip holds a denial, a background job, streamed
// output and an approval; the server exits 0 once its client closes, leaving no session dir.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { MCP_HELP } from '../../../src/cli/mcp.js'
import { ALLOW_ONCE, APPROVAL_FIELD } from '../../../src/mcp/index.js'
import { sessionDirsOf, sleepersOf, textOf, uniqueToken } from '../../support/mcp/harness.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { alive, eventually } from '../../support/subprocess/processes.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-mcp-stdio')
const outside = scratchDir('cordon-mcp-stdio-out')

/** A Client that allows every approval, connected to `cordon mcp ARGS` in the workspace. */
async function startCordonMcp(args: string[] = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', ...args], cwd: root })
  const client = new Client({ name: 'cordon-test-stdio', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  const asked: string[] = []
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push((request.params as { message: string }).message)
    return { action: 'accept', content: { [APPROVAL_FIELD]: ALLOW_ONCE } }
  })
  await client.connect(transport)
  return { client, transport, asked }
}

describe('cordon mcp over stdio', () => {
  it('--help says how a client starts it', () => {
    expect(MCP_HELP).toContain('"args": ["cordon", "mcp"')
  })

  it('a round trip: a denial, a background job, streamed output and an approval', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { client, transport, asked } = await startCordonMcp()
    const serverPid = transport.pid!
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(['bash', 'job_output', 'job_kill', 'sandbox_refusals'])

      // A denial: read-only by default, the write outside the workspace refused.
      const target = join(outside, 'file')
      const denied = await client.callTool({ name: 'bash', arguments: { command: `echo x > ${target}` } })
      expect(textOf(denied)).toContain('[sandbox: file access denied under read-only mode]')
      expect(denied.structuredContent).toMatchObject({ run: { sandbox: { mode: 'read-only', deniedPaths: [target] } } })
      const log = await client.callTool({ name: 'sandbox_refusals', arguments: {} })
      expect(textOf(log)).toContain(`write refused: ${target}`)

      // A background job, read and killed.
      const token = uniqueToken()
      const started = await client.callTool({
        name: 'bash',
        arguments: { command: `echo up; exec sleep ${token}`, run_in_background: true },
      })
      const id = (started.structuredContent as { job: { id: string } }).job.id
      const read = await client.callTool({ name: 'job_output', arguments: { job_id: id, wait_ms: 300 } })
      expect(textOf(read)).toBe('up\n\n[status: running]')
      expect(await eventually(() => sleepersOf(token).length === 1)).toBe(true)
      const killed = await client.callTool({ name: 'job_kill', arguments: { job_id: id } })
      expect(killed.structuredContent).toMatchObject({ job: { id, status: 'killed' } })
      expect(sleepersOf(token)).toEqual([])

      // Streamed output: progress notifications before the result.
      const messages: string[] = []
      const streamed = await client.callTool(
        { name: 'bash', arguments: { command: 'for i in 1 2 3 4; do echo "tick $i"; sleep 0.4; done' } },
        undefined,
        { onprogress: (p) => messages.push(p.message ?? '') },
      )
      expect(messages.length).toBeGreaterThanOrEqual(2)
      expect(messages.join('')).toBe('tick 1\ntick 2\ntick 3\ntick 4\n')
      expect(textOf(streamed)).toBe('tick 1\ntick 2\ntick 3\ntick 4\n')

      // An approval: the write inside the workspace, denied under read-only, runs under workspace-write.
      const inside = join(root, 'approved')
      const command = `echo ok > ${inside}`
      const control = await client.callTool({ name: 'bash', arguments: { command } })
      expect(control.structuredContent).toMatchObject({ run: { sandbox: { mode: 'read-only', denied: true } } })
      expect(existsSync(inside)).toBe(false)
      const retried = await client.callTool({
        name: 'bash',
        arguments: { command, sandbox_permissions: 'workspace-write', justification: 'it writes its output' },
      })
      expect(retried.structuredContent).toMatchObject({ run: { exitCode: 0, sandbox: { mode: 'workspace-write' } } })
      expect(existsSync(inside)).toBe(true)
      expect(asked).toHaveLength(1)
      expect(asked[0]).toContain(`  command: ${command}`)
    } finally {
      await client.close()
    }
    expect(await eventually(() => !alive(serverPid), 10_000)).toBe(true)
    expect(sessionDirsOf(serverPid)).toEqual([])
  })

  it('exits 0 once its client closes stdin, writing nothing but MCP on stdout', async () => {
    const child = spawn(process.execPath, [bin, 'mcp'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }
    child.stdin.write(`${JSON.stringify(initialize)}\n`)
    expect(await eventually(() => stdout.includes('\n'), 10_000)).toBe(true)
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    child.stdin.end()
    const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    expect(status).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 1, result: { serverInfo: { name: 'cordon' } } })
    expect(sessionDirsOf(child.pid!)).toEqual([])
  })
})
