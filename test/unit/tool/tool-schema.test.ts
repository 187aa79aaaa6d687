// modelInputSchema: zod argument schemas turned into the one JSON Schema OpenAI strict mode,
// Anthropic tool use and MCP all accept; and the rule checks the tool tests rely on, shown to
// catch what they claim to.
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { modelInputSchema } from '../../../src/tool/tool-schema.js'
import {
  anthropicViolations,
  mcpViolations,
  nonNullableProperties,
  openAIStrictViolations,
} from '../../support/tool-schema-rules.js'

const args = z.object({
  command: z.string().min(1).describe('what to run'),
  workdir: z.string().nullish().describe('where'),
  mode: z.enum(['a', 'b']).nullish().describe('which'),
  timeout_ms: z.number().positive().nullish().describe('how long'),
  flags: z
    .object({ verbose: z.boolean().describe('loud'), depth: z.number().int().nullish().describe('how deep') })
    .nullish()
    .describe('options'),
  tags: z.array(z.string().max(10)).nullish().describe('labels'),
})

describe('modelInputSchema', () => {
  it('lists every property in required, makes optional ones nullable, closes every object, drops other keywords', () => {
    expect(modelInputSchema(args)).toEqual({
      type: 'object',
      properties: {
        command: { type: 'string', description: 'what to run' },
        workdir: { type: ['string', 'null'], description: 'where' },
        mode: { type: ['string', 'null'], enum: ['a', 'b', null], description: 'which' },
        timeout_ms: { type: ['number', 'null'], description: 'how long' },
        flags: {
          type: ['object', 'null'],
          description: 'options',
          properties: {
            verbose: { type: 'boolean', description: 'loud' },
            depth: { type: ['integer', 'null'], description: 'how deep' },
          },
          required: ['verbose', 'depth'],
          additionalProperties: false,
        },
        tags: { type: ['array', 'null'], items: { type: 'string' }, description: 'labels' },
      },
      required: ['command', 'workdir', 'mode', 'timeout_ms', 'flags', 'tags'],
      additionalProperties: false,
    })
  })

  it('the result passes every rule; zod’s own output does not (the checks are not vacuous)', () => {
    const strict = modelInputSchema(args)
    const tool = { name: 'demo', description: 'a demo', inputSchema: strict }
    expect(openAIStrictViolations(strict)).toEqual([])
    expect(anthropicViolations(tool)).toEqual([])
    expect(mcpViolations(tool)).toEqual([])
    expect(nonNullableProperties(strict)).toEqual(['command'])
    const raw = z.toJSONSchema(args) as Record<string, unknown>
    expect(openAIStrictViolations(raw)).toEqual(
      expect.arrayContaining([
        '(root): keyword "$schema" is not supported in strict mode',
        '(root): property "workdir" missing from required',
        '(root).properties.command: keyword "minLength" is not supported in strict mode',
      ]),
    )
    expect(anthropicViolations({ ...tool, inputSchema: { anyOf: [strict] } })).toEqual([
      'input_schema: type must be "object"',
      'input_schema: no top-level anyOf',
    ])
    expect(mcpViolations({ ...tool, name: 'has space' })).toEqual([
      'name: "has space" must match /^[A-Za-z0-9_.-]{1,128}$/',
    ])
  })

  it('the arguments still parse a strict caller’s nulls and a lenient caller’s omissions', () => {
    expect(
      args.parse({ command: 'ls', workdir: null, mode: null, timeout_ms: null, flags: null, tags: null }),
    ).toMatchObject({
      command: 'ls',
    })
    expect(args.parse({ command: 'ls' })).toEqual({ command: 'ls' })
  })

  it('refuses an optional argument that would reject null', () => {
    expect(() => modelInputSchema(z.object({ a: z.string().optional() }))).toThrow(
      /"a" is optional: declare it .nullish\(\)/,
    )
  })
})
