// cordon's tools in the Vercel AI SDK, majors 6 (`ai`) and 7 (`ai-v7`), driven by each major's own
// mock language model: the model is offered the tool's strict JSON Schema, calls bash, the command
// runs for real in the sandbox and its result reaches the next model call as text. A command that
// prints over time streams preliminary results carrying its output before the final one.
import * as ai6 from 'ai'
import { convertArrayToReadableStream as stream6, MockLanguageModelV3 } from 'ai/test'
import * as ai7 from 'ai-v7'
import { convertArrayToReadableStream as stream7, MockLanguageModelV4 } from 'ai-v7/test'
import { afterAll, describe, expect, it } from 'vitest'
import { type AiSdkToolOutput, toAiSdkTools } from '../../../src/adapters/ai-sdk.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-ai-sdk')
const sandbox = await LocalSandbox.create()
const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
afterAll(async () => {
  await executor.dispose()
  await sandbox.dispose()
})
const { tools } = createBashTools({ executor, workspaceRoot: root })

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}
const finish = (unified: 'tool-calls' | 'stop') => ({
  type: 'finish',
  finishReason: { unified, raw: undefined },
  usage,
})
const callBash = (toolCallId: string, command: string) => ({
  type: 'tool-call',
  toolCallId,
  toolName: 'bash',
  input: JSON.stringify({ command }),
})

/** The stream parts of a model turn that calls bash, and of one that answers with text. */
const turns = (command: string) => [
  [{ type: 'stream-start', warnings: [] }, callBash('call-1', command), finish('tool-calls')],
  [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'done' },
    { type: 'text-end', id: 't' },
    finish('stop'),
  ],
]

/** A tool-result part of a stream, when it came (ms since the stream started). */
interface SeenResult {
  at: number
  preliminary: boolean
  output: AiSdkToolOutput
}

// Each major with its own functions and mock model; the tool set's types are v6's here, and
// test/e2e/adapters/types.test.ts compiles the same harness code against each major's own types.
const MAJORS = [
  {
    major: 'ai 6',
    ai: ai6,
    model: (parts: unknown[][]) =>
      new MockLanguageModelV3({ doStream: parts.map((p) => ({ stream: stream6(p) })) as never }),
  },
  {
    major: 'ai 7',
    ai: ai7 as unknown as typeof ai6,
    model: (parts: unknown[][]) =>
      new MockLanguageModelV4({
        doStream: parts.map((p) => ({ stream: stream7(p) })) as never,
      }) as unknown as MockLanguageModelV3,
  },
]

describe.each(MAJORS)('$major', ({ ai, model: scripted }) => {
  it("recognises the schema wrapper: the model is offered the tool's strict JSON Schema", () => {
    const set = toAiSdkTools(tools)
    expect(Object.keys(set)).toEqual(['bash', 'job_output', 'job_kill'])
    expect(ai.asSchema(set.bash.inputSchema).jsonSchema).toEqual(tools[0].inputSchema)
  })

  it('runs bash for real; the result reaches the next model call as text', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const model = scripted(turns('echo hello'))
    const result = ai.streamText({
      model,
      prompt: 'say hello',
      tools: toAiSdkTools(tools, { sessionId: 's1', agent: 'a' }),
      stopWhen: ai.stepCountIs(2),
    })
    expect(await result.text).toBe('done')
    expect(model.doStreamCalls[0]?.tools?.[0]).toMatchObject({
      type: 'function',
      name: 'bash',
      inputSchema: tools[0].inputSchema,
      strict: true,
    })
    const toolMessage = model.doStreamCalls[1]?.prompt.find((m) => m.role === 'tool')
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: 'call-1',
        toolName: 'bash',
        output: { type: 'text', value: 'hello\n' },
      }),
    ])
  })

  it('streams preliminary results carrying the output while the command runs, then the final one', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const model = scripted(turns('for i in 1 2 3; do echo $i; sleep 0.3; done'))
    const result = ai.streamText({ model, prompt: 'count', tools: toAiSdkTools(tools), stopWhen: ai.stepCountIs(2) })
    const start = Date.now()
    const seen: SeenResult[] = []
    for await (const part of result.fullStream) {
      if (part.type === 'tool-result' && !part.dynamic)
        seen.push({ at: Date.now() - start, preliminary: part.preliminary === true, output: part.output })
    }
    const running = seen.filter((s) => s.output.status === 'running')
    const final = seen.filter((s) => !s.preliminary)
    expect(final.map((s) => s.output)).toEqual([{ status: 'done', content: '1\n2\n3\n', isError: false }])
    expect(running.length).toBeGreaterThanOrEqual(2)
    expect(running.every((s) => s.preliminary)).toBe(true)
    const outputs = running.map((s) => (s.output.status === 'running' ? s.output.output : ''))
    expect(outputs[0]).toMatch(/^1\n/)
    for (const [i, out] of outputs.entries()) {
      expect('1\n2\n3\n'.startsWith(out)).toBe(true)
      if (i > 0) expect(out.length).toBeGreaterThan(outputs[i - 1]!.length)
    }
    // The first output showed while the command still had most of a second to run.
    expect(final[0]!.at - running[0]!.at).toBeGreaterThan(400)
  })
})

describe('toAiSdkTools, a call', () => {
  it("passes the SDK's abortSignal as the call's signal: an abort ends the command, TOOL_ABORTED last", async (ctx) => {
    await needBackend(ctx, 'landlock')
    const set = toAiSdkTools(tools, { progress: { intervalMs: 0 } })
    const controller = new AbortController()
    const outputs: AiSdkToolOutput[] = []
    const started = Date.now()
    const run = set.bash.execute!(
      { command: 'echo started; sleep 30' },
      { toolCallId: 'call-9', messages: [], abortSignal: controller.signal },
    ) as AsyncIterable<AiSdkToolOutput>
    for await (const output of run) {
      outputs.push(output)
      if (output.status === 'running') controller.abort()
    }
    expect(outputs[0]).toEqual({ status: 'running', output: 'started\n', omittedChars: 0 })
    expect(outputs.at(-1)).toMatchObject({ status: 'done', isError: true, code: 'TOOL_ABORTED' })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('progress: false yields the final result only; a bad argument is the INVALID_ARGUMENTS text', async () => {
    const set = toAiSdkTools(tools, { progress: false })
    const outputs: AiSdkToolOutput[] = []
    const run = set.bash.execute!({ command: '' }, { toolCallId: 'c', messages: [] }) as AsyncIterable<AiSdkToolOutput>
    for await (const output of run) outputs.push(output)
    expect(outputs).toEqual([
      {
        status: 'done',
        content: expect.stringMatching(/^invalid arguments: command: /),
        isError: true,
        code: 'INVALID_ARGUMENTS',
      },
    ])
  })
})
