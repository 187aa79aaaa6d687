// cordon's tools through the real `@anthropic-ai/sdk` client: `messages.create` sends what the
// adapter made (the request's `tools` is asserted), the `tool_use` blocks run for real in the
// sandbox (an echo, a write the read-only mode denies, an invalid call), and the `tool_result`
// blocks go back in a user message, `is_error` on the invalid one. The network is a stubbed `fetch`.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages'
import { afterAll, describe, expect, it } from 'vitest'
import { toAnthropicTools } from '../../../src/adapters/anthropic.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { cannedFetch } from '../../support/adapters/canned-fetch.js'
import { invalid } from '../../support/invalid.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-anthropic')
const sandbox = await LocalSandbox.create()
const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
afterAll(async () => {
  await executor.dispose()
  await sandbox.dispose()
})
const { tools } = createBashTools({ executor, workspaceRoot: root })
const denied = join(root, 'denied.txt')

/** A Messages API response with `content`. */
const message = (id: string, content: unknown[], stopReason: string) => ({
  id,
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
})
const toolUse = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input })

describe('@anthropic-ai/sdk, Messages API', () => {
  it('offers client tools, runs tool_use blocks in the sandbox and sends back tool_result blocks', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { fetch, requests } = cannedFetch([
      message(
        'msg_1',
        [
          { type: 'text', text: 'running it', citations: null },
          toolUse('toolu_1', 'bash', { command: 'echo hello' }),
          toolUse('toolu_2', 'bash', { command: `echo x > ${denied}`, workdir: null }),
          toolUse('toolu_3', 'bash', { command: '' }),
          toolUse('toolu_4', 'lookup', {}),
        ],
        'tool_use',
      ),
      message('msg_2', [{ type: 'text', text: 'done', citations: null }], 'end_turn'),
    ])
    const client = new Anthropic({ apiKey: 'test', fetch, maxRetries: 0 })
    const cordon = toAnthropicTools(tools, { sessionId: 's1', agent: 'a' })
    const messages: MessageParam[] = [{ role: 'user', content: 'say hello' }]

    const first = await client.messages.create({ model: 'claude-test', max_tokens: 100, messages, tools: cordon.tools })
    expect(requests[0]?.body).toMatchObject({ tools: cordon.tools })
    expect(cordon.tools.map((t) => t.name)).toEqual(['bash', 'job_output', 'job_kill'])
    expect(cordon.tools[0]).toEqual({
      name: 'bash',
      description: tools[0].description,
      input_schema: tools[0].inputSchema,
    })

    // The harness's own tool (lookup) is left to the harness.
    const results = await cordon.runAll(first.content)
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: results })
    const second = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages,
      tools: cordon.tools,
    })
    expect(second.content).toEqual([{ type: 'text', text: 'done', citations: null }])

    const sent = (requests[1]!.body as { messages: Array<{ role: string; content: unknown }> }).messages
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    const blocks = sent[2]?.content as Array<{ tool_use_id: string; content: string; is_error?: boolean }>
    expect(blocks[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello\n' })
    expect(blocks[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_2' })
    expect(blocks[1]).not.toHaveProperty('is_error')
    expect(blocks[1]?.content).toContain('[sandbox: file access denied under read-only mode]')
    expect(blocks[2]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_3', is_error: true })
    expect(blocks[2]?.content).toMatch(/^invalid arguments: command: /)
    expect(blocks).toHaveLength(3)
    expect(existsSync(denied)).toBe(false)
  })

  it('run answers a call for an unknown tool with error text; a bad tool list or option throws, naming each', async () => {
    const cordon = toAnthropicTools(tools)
    const block = {
      type: 'tool_use' as const,
      id: 'toolu_9',
      name: 'lookup',
      input: {},
      caller: { type: 'direct' as const },
    }
    expect(await cordon.run(block)).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_9',
      content: 'unknown tool "lookup"; the tools are: bash, job_output, job_kill',
      is_error: true,
    })
    const error = invalid(() =>
      toAnthropicTools(
        [tools[0], tools[0], { name: 'x' }] as unknown as typeof tools,
        {
          sessionMode: 'open',
        } as unknown as { sessionMode: 'read-only' },
      ),
    )
    expect(error.issues).toEqual([
      'tools[2].description: must be a string',
      'tools[2].inputSchema: must be a JSON Schema object',
      'tools[2].execute: must be a function',
      'tools[1].name: "bash" twice',
      expect.stringMatching(/^options\.sessionMode: .*"read-only"/),
    ])
  })
})
