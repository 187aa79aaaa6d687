// A foreground command's output streamed as MCP progress notifications, with the SDK's own
// Client over an in-memory transport and a real sandbox: several notifications carry the output
// while the command runs and before its result; none is sent without a progressToken; each
// message is bounded and shows the command's escapes as visible text. A client's cancellation
// (notifications/cancelled) ends the command's tree.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_PROGRESS_MESSAGE } from '../../../src/mcp/index.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { type Connected, connect, sleepersOf, textOf, uniqueToken } from '../../support/mcp/harness.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { eventually } from '../../support/subprocess/processes.js'

const root = scratchDir('cordon-mcp-progress')

/** The progress notifications among `messages`, in order. */
function progressIn(messages: Connected['received']): { progress: number; message?: string }[] {
  return messages.flatMap((m) =>
    'method' in m && m.method === 'notifications/progress' ? [m.params as { progress: number; message?: string }] : [],
  )
}

describe('streamed output as progress (in-memory, real sandbox)', () => {
  let sandbox: LocalSandbox
  let executor: LocalShellExecutor
  let c: Connected
  beforeAll(async () => {
    sandbox = await LocalSandbox.create()
    executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
    c = await connect({ executor, workspaceRoot: root })
  })
  afterAll(async () => {
    await c?.mcp.close()
    await executor?.dispose()
    await sandbox?.dispose()
  })

  it('with a progressToken: several notifications carry the output, in order, all before the result', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const seen: { progress: number; message?: string }[] = []
    const first = c.received.length
    const r = await c.client.callTool(
      { name: 'bash', arguments: { command: 'for i in 1 2 3 4 5; do echo "line $i"; sleep 0.4; done' } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    )
    expect(textOf(r)).toBe('line 1\nline 2\nline 3\nline 4\nline 5\n')
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(seen.map((p) => p.message).join('')).toBe('line 1\nline 2\nline 3\nline 4\nline 5\n')
    const progress = seen.map((p) => p.progress)
    expect(progress).toEqual([...progress].sort((a, b) => a - b))
    expect(new Set(progress).size).toBe(progress.length)
    // On the wire: every notification came before the response.
    const after = c.received.slice(first)
    const response = after.findIndex((m) => 'result' in m)
    expect(progressIn(after.slice(0, response))).toHaveLength(seen.length)
    expect(progressIn(after.slice(response))).toEqual([])
  })

  it('without a progressToken: no progress notification at all, the output only in the result', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const first = c.received.length
    const r = await c.client.callTool({
      name: 'bash',
      arguments: { command: 'for i in 1 2 3; do echo "line $i"; sleep 0.3; done' },
    })
    expect(textOf(r)).toBe('line 1\nline 2\nline 3\n')
    expect(c.received.length).toBeGreaterThan(first)
    expect(progressIn(c.received.slice(first))).toEqual([])
  })

  it('coalesced and bounded: a flood of output is a few messages, each its escaped tail', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const seen: { progress: number; message?: string }[] = []
    // 20000 lines, each with an ESC, a carriage return and a bidi override the client must not get raw.
    const command = `for i in $(seq 20000); do printf 'x\\033]0;title\\a\\r\\u202eline %d\\n' "$i"; done`
    const r = await c.client.callTool({ name: 'bash', arguments: { command } }, undefined, {
      onprogress: (p) => seen.push(p),
    })
    expect(r.isError).toBe(false)
    expect(seen.length).toBeGreaterThanOrEqual(1)
    expect(seen.length).toBeLessThan(100)
    for (const p of seen) {
      expect(p.message!.length).toBeLessThanOrEqual(MAX_PROGRESS_MESSAGE)
      expect(holdsRawControl(p.message!.replaceAll('\n', ''))).toBe(false)
    }
    const last = seen.at(-1)!.message!
    expect(last).toMatch(/\\x1b\]0;title\\x07\\r\\u202eline 20000\n$/)
    expect(seen.some((p) => p.message!.startsWith('…['))).toBe(true)
  })

  it('a client that cancels the call ends the command (notifications/cancelled)', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const token = uniqueToken()
    const abort = new AbortController()
    const call = c.client.callTool({ name: 'bash', arguments: { command: `exec sleep ${token}` } }, undefined, {
      signal: abort.signal,
    })
    expect(await eventually(() => sleepersOf(token).length === 1, 10_000)).toBe(true)
    abort.abort('the person pressed stop')
    await expect(call).rejects.toThrow()
    expect(await eventually(() => sleepersOf(token).length === 0, 10_000)).toBe(true)
  })
})
