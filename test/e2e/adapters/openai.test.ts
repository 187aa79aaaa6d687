// cordon's tools through the real `openai` client, majors 6 and 7, both APIs: the client sends
// what the adapter made (the request's `tools` is asserted), the model's calls run for real in
// the sandbox (an echo, and a write the read-only mode denies), and the results go back in the
// API's own format (the second request is asserted). The network is a stubbed `fetch`.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI6 from 'openai'
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import OpenAI7 from 'openai-v7'
import { afterAll, describe, expect, it } from 'vitest'
import { toOpenAITools } from '../../../src/adapters/openai.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { cannedFetch } from '../../support/adapters/canned-fetch.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { invalid } from '../../support/invalid.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-openai')
const sandbox = await LocalSandbox.create()
const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
afterAll(async () => {
  await executor.dispose()
  await sandbox.dispose()
})
const { tools } = createBashTools({ executor, workspaceRoot: root })
const denied = join(root, 'denied.txt')

/** What a strict model sends: every argument, null for those it leaves out. */
function strictArgs(command: string): string {
  return JSON.stringify({
    command,
    workdir: null,
    timeout_ms: null,
    run_in_background: null,
    sandbox_permissions: null,
    additional_hosts: null,
    justification: null,
  })
}

/** A Responses API response with `output`. */
const response = (id: string, output: unknown[]) => ({
  id,
  object: 'response',
  created_at: 0,
  model: 'gpt-test',
  status: 'completed',
  output,
})
const functionCall = (callId: string, name: string, args: string) => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
})
const text = (value: string) => ({
  type: 'message',
  id: 'msg_1',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: value, annotations: [] }],
})

/** A Chat Completions response whose message is `message`. */
const completion = (message: Record<string, unknown>) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-test',
  choices: [{ index: 0, finish_reason: message.tool_calls ? 'tool_calls' : 'stop', message, logprobs: null }],
})
const toolCall = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

// The v7 client runs here under v6's types: test/e2e/adapters/types.test.ts compiles the same
// harness code against each major's own types.
const MAJORS = [
  ['openai 6', OpenAI6],
  ['openai 7', OpenAI7 as unknown as typeof OpenAI6],
] as const

describe.each(MAJORS)('%s, Responses API', (_, OpenAI) => {
  it('offers strict function tools, runs the calls in the sandbox and sends back function_call_output items', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { fetch, requests } = cannedFetch([
      response('resp_1', [
        functionCall('call_1', 'bash', strictArgs('echo hello')),
        functionCall('call_2', 'bash', strictArgs(`echo x > ${denied}`)),
        functionCall('call_3', 'lookup', '{}'),
      ]),
      response('resp_2', [text('done')]),
    ])
    const client = new OpenAI({ apiKey: 'test', fetch, maxRetries: 0 })
    const cordon = toOpenAITools(tools, { api: 'responses', sessionId: 's1', agent: 'a' })

    const first = await client.responses.create({ model: 'gpt-test', input: 'say hello', tools: cordon.tools })
    expect(requests[0]?.body).toMatchObject({ tools: cordon.tools })
    expect(cordon.tools.map((t) => [t.type, t.name, t.strict])).toEqual([
      ['function', 'bash', true],
      ['function', 'job_output', true],
      ['function', 'job_kill', true],
    ])
    expect(cordon.tools[0]).toEqual({
      type: 'function',
      name: 'bash',
      description: tools[0].description,
      parameters: tools[0].inputSchema,
      strict: true,
    })

    // The harness's own tool (lookup) is left to the harness.
    const outputs = await cordon.runAll(first.output)
    expect(outputs.map((o) => o.call_id)).toEqual(['call_1', 'call_2'])
    const second = await client.responses.create({
      model: 'gpt-test',
      previous_response_id: first.id,
      input: outputs,
      tools: cordon.tools,
    })
    expect(second.output_text).toBe('done')
    const sent = (requests[1]!.body as { input: Array<{ type: string; call_id: string; output: string }> }).input
    expect(sent[0]).toEqual({ type: 'function_call_output', call_id: 'call_1', output: 'hello\n' })
    expect(sent[1]).toMatchObject({ type: 'function_call_output', call_id: 'call_2' })
    expect(sent[1]?.output).toContain('[sandbox: file access denied under read-only mode]')
    expect(existsSync(denied)).toBe(false)
  })

  it("a bad JSON and an unknown tool are the model's error text, not a throw", async () => {
    const cordon = toOpenAITools(tools, { api: 'responses' })
    const call = (name: string, args: string) => ({
      type: 'function_call' as const,
      call_id: 'c',
      name,
      arguments: args,
    })
    const bad = await cordon.run(call('bash', '{"command": '))
    expect(bad).toMatchObject({ type: 'function_call_output', call_id: 'c' })
    expect(bad.output).toMatch(/^invalid arguments: not a JSON object \(/)
    expect((await cordon.run(call('lookup', '{}'))).output).toBe(
      'unknown tool "lookup"; the tools are: bash, job_output, job_kill',
    )
    expect((await cordon.run(call('bash', '{}'))).output).toMatch(/^invalid arguments: command: /)
  })
})

describe.each(MAJORS)('%s, Chat Completions', (_, OpenAI) => {
  it('offers { type: function, function } tools, runs tool_calls in the sandbox and sends back tool messages', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { fetch, requests } = cannedFetch([
      completion({
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          toolCall('call_1', 'bash', strictArgs('echo hello')),
          toolCall('call_2', 'bash', strictArgs(`echo x > ${denied}`)),
          toolCall('call_3', 'bash', 'not json'),
        ],
      }),
      completion({ role: 'assistant', content: 'done', refusal: null }),
    ])
    const client = new OpenAI({ apiKey: 'test', fetch, maxRetries: 0 })
    const cordon = toOpenAITools(tools, { api: 'chat', cwd: root })
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'say hello' }]

    const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools: cordon.tools })
    expect(requests[0]?.body).toMatchObject({ tools: cordon.tools })
    expect(cordon.tools[0]).toEqual({
      type: 'function',
      function: { name: 'bash', description: tools[0].description, parameters: tools[0].inputSchema, strict: true },
    })

    const message = first.choices[0]!.message
    messages.push(message, ...(await cordon.runAll(message.tool_calls)))
    const second = await client.chat.completions.create({ model: 'gpt-test', messages, tools: cordon.tools })
    expect(second.choices[0]?.message.content).toBe('done')
    const sent = (requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool'])
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'hello\n' })
    expect(sent[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_2' })
    expect(sent[3]?.content).toContain('[sandbox: file access denied under read-only mode]')
    expect(sent[4]).toMatchObject({ role: 'tool', tool_call_id: 'call_3' })
    expect(sent[4]?.content).toMatch(/^invalid arguments: not a JSON object/)
    expect(existsSync(denied)).toBe(false)
  })
})

describe('toOpenAITools, its arguments', () => {
  it('refuses a bad api, an unknown option and a bad session field, naming each', () => {
    const error = invalid(() =>
      toOpenAITools(tools, { api: 'completions', cwd: 'relative', color: 'red' } as unknown as { api: 'chat' }),
    )
    expect(error.issues).toEqual([
      "options.api: must be 'responses' or 'chat'",
      'options.cwd: must be an absolute path, got "relative"',
      'options: unknown option "color"',
    ])
  })
})
