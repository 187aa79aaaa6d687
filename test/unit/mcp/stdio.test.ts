// `cordon mcp`'s server in-process, over streams the test holds: it speaks MCP on them, runs each
// command under the flags' policy (a --hide path laid over every run cannot be read; the control
// without it can), and once stdin ends it disposes its sandbox (the session dir goes) and
// resolves 0.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { policyFrom } from '../../../src/cli/policy-options.js'
import { serveStdio } from '../../../src/mcp/stdio.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { eventually } from '../../support/subprocess/processes.js'

const root = scratchDir('cordon-mcp-serve')
const secret = join(scratchDir('cordon-mcp-serve-secret'), 'token')
writeFileSync(secret, 'hunter2\n')

/** Serves with `flags` (as `cordon mcp` parsed them), runs `command` once, ends stdin; the text and the exit status. */
async function serveOnce(values: Record<string, unknown>, command: string) {
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()]
  const replies: { id?: number; result?: { content: { text: string }[] } }[] = []
  createInterface({ input: stdout }).on('line', (line) => replies.push(JSON.parse(line)))
  const served = serveStdio({ flags: policyFrom({ root, ...values }, root), stdin, stdout, stderr })
  const send = (message: object) => stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
  send({
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  })
  send({ method: 'notifications/initialized' })
  send({ id: 2, method: 'tools/call', params: { name: 'bash', arguments: { command } } })
  expect(await eventually(() => replies.some((r) => r.id === 2), 30_000)).toBe(true)
  const text = replies.find((r) => r.id === 2)?.result?.content[0]?.text ?? ''
  stdin.end()
  return { text, status: await served }
}

describe('serveStdio', () => {
  it('serves until stdin ends, then disposes its sandbox (the session dir goes) and resolves 0', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { text, status } = await serveOnce({}, 'echo "$TMPDIR"')
    const tmp = text.split('\n')[0]!
    expect(tmp).toMatch(/\/sessions\/\d+-mcp-[0-9a-f]{12}-\w+\/m\/t$/)
    expect(status).toBe(0)
    expect(existsSync(tmp)).toBe(false)
  })

  it('lays the flags’ policy over every run: a --hide path cannot be read (control: it can without)', async (ctx) => {
    await needBackend(ctx, 'landlock')
    expect((await serveOnce({}, `cat ${secret}`)).text).toBe('hunter2\n')
    const hidden = await serveOnce({ hide: [secret] }, `cat ${secret}`)
    expect(hidden.text).not.toContain('hunter2')
    expect(hidden.text).toMatch(/\[exit code: 1\]$/)
  })
})
