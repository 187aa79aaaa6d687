// The model's tools (createBashTools: bash, job_output, job_kill, sandbox_refusals) under 10,000
// odd argument objects each, over a real confined executor: every call resolves with a result,
// never a throw; an error carries a code of the closed set; arguments the schema refuses are
// INVALID_ARGUMENTS naming each refused field; and nothing starts for any refused call.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import type { Approval } from '../../src/tool/approval.js'
import {
  BashArgumentsSchema,
  JobKillArgumentsSchema,
  JobOutputArgumentsSchema,
  SandboxRefusalsArgumentsSchema,
} from '../../src/tool/arguments.js'
import type { ModelTool, ToolCall, ToolResult } from '../../src/tool/model-tool.js'
import { TOOL_ERROR_CODES } from '../../src/tool/tool-error-codes.js'
import { type BashTools, createBashTools } from '../../src/tool/toolset.js'
import { ESCALATION_TARGETS } from '../../src/policy/widen.js'
import { scratchDir } from '../support/scratch.js'
import {
  oddNumber,
  oddString,
  oddValue,
  ownProtoKey,
  PROPERTY_RUNS,
  PROPERTY_TIMEOUT_MS,
  PROTOTYPE_KEYS,
  prototypeIsClean,
} from '../support/property/odd-values.js'
import { processStarts, spyOnProcessStarts, startsSince } from '../support/property/spawn-spy.js'

vi.mock(import('../../src/subprocess/native.js'), async (original) =>
  (await import('../support/property/spawn-spy.js')).spyingNative(await original()),
)

const root = scratchDir('cordon-tool-property')
/** Every approval is refused: a wider retry never runs. */
const refuseAll: Approval = { request: async () => ({ outcome: 'rejected' }) }
let sandbox: LocalSandbox
let executor: LocalShellExecutor
let tools: BashTools

beforeAll(async () => {
  spyOnProcessStarts()
  vi.stubEnv('CORDON_PRIVATE_DIR', scratchDir('cordon-tool-property-private'))
  sandbox = await LocalSandbox.create({ config: false })
  executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
  tools = createBashTools({ executor, approval: refuseAll, workspaceRoot: root })
})
afterAll(async () => {
  await executor?.dispose()
  await sandbox?.dispose()
  vi.unstubAllEnvs()
})

const CALL: ToolCall = { callId: 'call-1', agent: 'agent-1', sessionId: 'session-1', cwd: root }

/** A field's value: mostly one the schema takes, else anything at all. */
function field<T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight: 2 }, { arbitrary: oddValue, weight: 1 })
}

/** Keys a model might add: unknown ones, and an own `__proto__`, `constructor`… */
const extraKeys = fc.dictionary(fc.oneof(oddString, fc.constantFrom(...PROTOTYPE_KEYS)), oddValue, { maxKeys: 2 })

/** An argument object built from `fields`, with odd extra keys, or (rarely) no object at all. */
function argumentsOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const object = fc
    .tuple(fc.record(fields, { requiredKeys: [] }), extraKeys, fc.boolean())
    .map(([given, extra, proto]) => ({ ...extra, ...given, ...(proto ? ownProtoKey({ polluted: true }) : {}) }))
  return fc.oneof({ arbitrary: object, weight: 9 }, { arbitrary: oddValue, weight: 1 })
}

/**
 * bash's arguments. A command that could run is `true` or `exit 3`: a random string would be a
 * random bash script. Every other string holds a NUL byte (no process can take it) or is empty.
 */
const bashArguments = argumentsOf({
  command: fc.oneof(
    { arbitrary: fc.constantFrom('true', 'exit 3'), weight: 3 },
    { arbitrary: oddString.map((s) => `${s}\0`), weight: 1 },
    { arbitrary: oddValue.filter((v) => typeof v !== 'string'), weight: 1 },
    { arbitrary: fc.constant(''), weight: 1 },
  ),
  workdir: field(fc.constantFrom(null, '.', root, '/', 'missing/dir')),
  timeout_ms: field(fc.oneof(fc.constantFrom(null, 5000, 1e308), oddNumber)),
  run_in_background: field(fc.constantFrom(null, false, true)),
  sandbox_permissions: field(fc.constantFrom(null, ...ESCALATION_TARGETS)),
  additional_hosts: field(
    fc.oneof(fc.constant(null), fc.array(fc.constantFrom('example.com', '*.x.org', '10.0.0.1:80'))),
  ),
  justification: field(fc.constantFrom(null, 'to build', '  ')),
})

/** The job tools' and sandbox_refusals' arguments. */
const jobArguments = argumentsOf({
  job_id: field(fc.constantFrom('job-1', 'job-2', 'nope')),
  wait_ms: field(fc.constantFrom(null, 0, 10)),
})
const refusalArguments = argumentsOf({
  after_run: field(fc.constantFrom(null, 0, 3)),
  limit: field(fc.constantFrom(null, 1, 50, 1000)),
})

/** Runs `tool` on `args` and checks what holds for every call; returns the result and what started. */
async function call(tool: ModelTool, args: unknown): Promise<{ result: ToolResult; started: string[] }> {
  const before = processStarts()
  const result = await tool.execute(args, CALL)
  const started = startsSince(before)
  expect(typeof result.content).toBe('string')
  expect(typeof result.isError).toBe('boolean')
  if (result.isError) expect(TOOL_ERROR_CODES).toContain(result.code)
  expect(prototypeIsClean()).toBe(true)
  return { result, started }
}

/** The fields a zod schema refuses in `args`, by their top-level name (`(root)` for a non-object). */
function refusedFields(
  schema: { safeParse(v: unknown): { error?: { issues: { path: PropertyKey[] }[] } } },
  args: unknown,
): string[] {
  return (schema.safeParse(args).error?.issues ?? []).map((i) => (i.path.length === 0 ? '(root)' : String(i.path[0])))
}

/** Codes after which nothing may have started: the call was refused before any run. */
const REFUSED = new Set([
  'INVALID_ARGUMENTS',
  'INVALID_ESCALATION',
  'ESCALATION_NOT_WIDER',
  'ESCALATION_UNAVAILABLE',
  'ESCALATION_REFUSED',
  'INVALID_REQUEST',
])

describe('the model tools under odd arguments', () => {
  it(
    'bash: a result for every call, a refused field named, nothing started for a refused call',
    async () => {
      await fc.assert(
        fc.asyncProperty(bashArguments, async (args) => {
          const { result, started } = await call(tools.bash, args)
          const refused = refusedFields(BashArgumentsSchema, args)
          if (refused.length > 0) {
            expect(result.code).toBe('INVALID_ARGUMENTS')
            for (const name of refused) expect(result.content).toContain(name)
          }
          if (result.code !== undefined && REFUSED.has(result.code)) expect(started, result.content).toEqual([])
          if (result.code === 'INVALID_ESCALATION')
            expect(result.content).toMatch(/sandbox_permissions|additional_hosts|justification/)
          if (result.code === 'INVALID_REQUEST') expect(result.content).toMatch(/command|workdir|timeout_ms/)
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'job_output, job_kill and sandbox_refusals: a result for every call, a refused field named, nothing started',
    async () => {
      const cases = fc.oneof(
        jobArguments.map((args) => ({ tool: tools.jobOutput as ModelTool, schema: JobOutputArgumentsSchema, args })),
        jobArguments.map((args) => ({ tool: tools.jobKill as ModelTool, schema: JobKillArgumentsSchema, args })),
        refusalArguments.map((args) => ({
          tool: tools.refusals as ModelTool,
          schema: SandboxRefusalsArgumentsSchema,
          args,
        })),
      )
      await fc.assert(
        fc.asyncProperty(cases, async ({ tool, schema, args }) => {
          const { result, started } = await call(tool, args)
          expect(started).toEqual([])
          const refused = refusedFields(schema, args)
          if (refused.length === 0) return
          expect(result.code).toBe('INVALID_ARGUMENTS')
          for (const name of refused) expect(result.content).toContain(name)
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it('the spy sees what a harmless call starts', async () => {
    const before = processStarts()
    expect(await tools.bash.execute({ command: 'true' }, CALL)).toMatchObject({ isError: false })
    expect(startsSince(before).length).toBeGreaterThan(0)
  })
})
