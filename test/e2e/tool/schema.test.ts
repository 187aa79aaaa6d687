// The tools' JSON Schemas against the rules of the surfaces a harness registers them with:
// OpenAI function calling in strict mode, Anthropic tool use, MCP; and a snapshot, so any change
// to what a model is offered shows up in review.
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { scratchDir } from '../../support/scratch.js'
import {
  anthropicViolations,
  mcpViolations,
  nonNullableProperties,
  openAIFunctionViolations,
  undescribedProperties,
} from '../../support/tool-schema-rules.js'

const root = scratchDir('cordon-schema')
const sandbox = await LocalSandbox.create()
afterAll(() => sandbox.dispose())

const toolSets = {
  unsandboxed: createBashTools({ executor: new LocalShellExecutor({ cwd: root }), workspaceRoot: root }),
  sandboxed: createBashTools({ executor: new LocalShellExecutor({ cwd: root, sandbox }), workspaceRoot: root }),
}

describe.each(Object.entries(toolSets))('tool schemas, %s', (name, set) => {
  it('offers bash, job_output and job_kill', () => {
    expect(set.tools.map((t) => t.name)).toEqual(['bash', 'job_output', 'job_kill'])
  })

  it.each(set.tools.map((t) => [t.name, t] as const))('%s is valid for OpenAI strict mode', (_, tool) => {
    expect(openAIFunctionViolations(tool)).toEqual([])
  })

  it.each(set.tools.map((t) => [t.name, t] as const))('%s is valid for Anthropic tool use', (_, tool) => {
    expect(anthropicViolations(tool)).toEqual([])
  })

  it.each(set.tools.map((t) => [t.name, t] as const))('%s is valid as an MCP tool', (_, tool) => {
    expect(mcpViolations(tool)).toEqual([])
  })

  it('optional arguments are nullable; only the essential ones must be given; every one is described', () => {
    expect(nonNullableProperties(set.bash.inputSchema)).toEqual(['command'])
    expect(nonNullableProperties(set.jobOutput.inputSchema)).toEqual(['job_id'])
    expect(nonNullableProperties(set.jobKill.inputSchema)).toEqual(['job_id'])
    for (const tool of set.tools) expect(undescribedProperties(tool.inputSchema), tool.name).toEqual([])
  })

  it('run_in_background is always offered; the escalation fields iff the executor confines', () => {
    const properties = Object.keys(set.bash.inputSchema.properties as object)
    expect(properties).toContain('run_in_background')
    const escalation = ['sandbox_permissions', 'justification'].filter((p) => properties.includes(p))
    expect(escalation).toEqual(name === 'sandboxed' ? ['sandbox_permissions', 'justification'] : [])
  })

  it('matches the snapshot', async () => {
    const schemas = Object.fromEntries(
      set.tools.map((t) => [t.name, { description: t.description, inputSchema: t.inputSchema }]),
    )
    await expect(`${JSON.stringify(schemas, null, 2)}\n`).toMatchFileSnapshot(
      `./__snapshots__/tool-schemas.${name}.json.snap`,
    )
  })
})
