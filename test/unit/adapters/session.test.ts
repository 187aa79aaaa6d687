// What the adapters share: a harness's bad tool list or session context throws one
// InvalidRequestError naming every field; a model's bad JSON or unknown tool is a result it reads;
// a call runs with the session's context and the package's call id. And the adapters stay glue:
// they import the peer packages for types only, and nothing of cordon below the public tool types.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { zod } from '../../../src/policy/schema/zod-on-demand.js'
import {
  argumentsFromJson,
  checkAdapterInput,
  runJsonCall,
  SESSION_FIELDS,
  toolRunner,
} from '../../../src/adapters/session.js'
import type { ModelTool, ToolCall } from '../../../src/tool/model-tool.js'
import { importSpecifiers, stripComments } from '../../support/repository/import-graph.js'
import { invalid } from '../../support/invalid.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const { z } = zod()

/** A tool that answers with the call it was given. */
function echoTool(name: string): ModelTool & { calls: Array<{ args: unknown; call: ToolCall }> } {
  const calls: Array<{ args: unknown; call: ToolCall }> = []
  return {
    calls,
    name,
    description: `the ${name} tool`,
    inputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false },
    argumentsSchema: z.object({}),
    async execute(args, call) {
      calls.push({ args, call })
      return { content: `${name} ran`, isError: false }
    },
  }
}

describe('checkAdapterInput', () => {
  const schema = z.strictObject(SESSION_FIELDS)

  it('returns the options; names every bad tool and option, each by field', () => {
    const tools = [echoTool('a'), echoTool('b')]
    expect(checkAdapterInput('x', tools, { cwd: '/w', sessionMode: 'read-only' }, schema)).toEqual({
      cwd: '/w',
      sessionMode: 'read-only',
    })
    expect(checkAdapterInput('x', tools, undefined, schema)).toEqual({})
    const error = invalid(() =>
      checkAdapterInput(
        'toThing',
        [echoTool('a'), { ...echoTool('a'), execute: 1 }, 'b'],
        { sessionId: '', x: 1 },
        schema,
      ),
    )
    expect(error.message).toMatch(/^invalid toThing arguments: /)
    expect(error.issues).toEqual([
      'tools[1].execute: must be a function',
      'tools[2]: must be a tool ({ name, description, inputSchema, execute })',
      'tools[1].name: "a" twice',
      'options.sessionId: must not be empty',
      'options: unknown option "x"',
    ])
    expect(invalid(() => checkAdapterInput('x', { bash: 1 }, {}, schema)).issues).toEqual([
      'tools: must be a list of tools (createBashTools(...).tools)',
    ])
  })
})

describe('toolRunner', () => {
  it("runs a call with the session's context and the call's id; an unknown tool is an error result", async () => {
    const tool = echoTool('bash')
    const runner = toolRunner([tool], { agent: 'a', sessionId: 's', cwd: '/w' })
    const controller = new AbortController()
    const onOutput = () => {}
    expect(runner.owns('bash')).toBe(true)
    expect(runner.owns('other')).toBe(false)
    expect(await runner.run('bash', { command: 'x' }, 'call-1', { signal: controller.signal, onOutput })).toEqual({
      content: 'bash ran',
      isError: false,
    })
    expect(tool.calls).toEqual([
      {
        args: { command: 'x' },
        call: { agent: 'a', sessionId: 's', cwd: '/w', callId: 'call-1', signal: controller.signal, onOutput },
      },
    ])
    expect(await runner.run('other', {}, 'call-2')).toEqual({
      content: 'unknown tool "other"; the tools are: bash',
      isError: true,
      code: 'INVALID_ARGUMENTS',
    })
  })

  it('parses JSON arguments: an empty string is no arguments, a bad JSON the INVALID_ARGUMENTS result', async () => {
    expect(argumentsFromJson('{"a":1}')).toEqual({ ok: true, args: { a: 1 } })
    expect(argumentsFromJson('  ')).toEqual({ ok: true, args: {} })
    const bad = argumentsFromJson('{"a":')
    expect(bad).toMatchObject({ ok: false, error: { isError: true, code: 'INVALID_ARGUMENTS' } })
    const tool = echoTool('bash')
    const result = await runJsonCall(toolRunner([tool], {}), { name: 'bash', arguments: '[1,', callId: 'c' })
    expect(result.content).toMatch(/^invalid arguments: not a JSON object \(/)
    expect(tool.calls).toEqual([])
  })
})

describe('the adapters stay glue', () => {
  const dir = path.join(repo, 'src', 'adapters')
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))
  /** What an adapter may import of cordon: the public tool types and the policy's schema, errors and defaults. */
  const ALLOWED =
    /^\.\.\/(tool\/(model-tool|tool-error-codes)|policy\/(defaults|errors|schema\/[\w-]+))\.js$|^\.\/[\w-]+\.js$/

  it('import each peer package for its types only, and of cordon only the public tool types and policy', () => {
    expect(files).toContain('session.ts')
    const problems = files.flatMap((file) => {
      const code = stripComments(fs.readFileSync(path.join(dir, file), 'utf8'))
      const peers = [...code.matchAll(/^import\s+(type\s+)?[^'"]*?from\s+'(openai|ai|@anthropic-ai\/sdk)(\/[^']*)?'/gm)]
      const runtimePeers = peers.filter((m) => m[1] === undefined).map((m) => `${file}: imports ${m[2]} at run time`)
      const cordon = importSpecifiers(code)
        .filter((s) => s.startsWith('.') && !ALLOWED.test(s))
        .map((s) => `${file}: imports ${s}`)
      return [...runtimePeers, ...cordon]
    })
    expect(problems).toEqual([])
  })

  it('the check sees a runtime import of a peer and an import of cordon internals', () => {
    const code = "import OpenAI from 'openai'\nimport { LocalSandbox } from '../sandbox/local-sandbox.js'\n"
    expect([
      ...code.matchAll(/^import\s+(type\s+)?[^'"]*?from\s+'(openai|ai|@anthropic-ai\/sdk)(\/[^']*)?'/gm),
    ]).toHaveLength(1)
    expect(importSpecifiers(code).filter((s) => s.startsWith('.') && !ALLOWED.test(s))).toEqual([
      '../sandbox/local-sandbox.js',
    ])
  })
})
