// The output schemas and the structured content made from tool results agree exactly, checked
// with the validator the SDK's Client uses (ajv): every optional fact present validates, an extra
// field or a wrong type does not (the objects are closed), and errors carry their code.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { describe, expect, it } from 'vitest'
import { callToolResult, structuredContentOf } from '../../../src/mcp/output-facts.js'
import { outputSchemaOf, outputValidatorOf } from '../../../src/mcp/output-schema.js'
import type { ShellRunResult, ShellSandboxInfo } from '../../../src/shell/types.js'
import type { JobInfo } from '../../../src/tool/jobs/port.js'
import type { ToolResult } from '../../../src/tool/model-tool.js'
import { TOOL_ERROR_CODES } from '../../../src/tool/tool-error-codes.js'

const ajv = new AjvJsonSchemaValidator()
const check = (tool: string, value: unknown) => ajv.getValidator(outputSchemaOf(tool)!)(value)

const sandbox: ShellSandboxInfo = {
  mode: 'workspace-write',
  denied: true,
  enforcement: 'partial',
  runnerFailed: false,
  backend: 'bubblewrap',
  deniedPaths: ['/etc/x'],
  refusedPaths: ['/etc/x', '/etc/y'],
  deniedFor: ['files', 'network'],
  refusalSource: 'messages',
  network: {
    refused: [{ host: 'evil.example', port: 443, count: 2, reason: 'not-allowed' }],
    refusedOmitted: 3,
    allowed: [{ host: 'registry.npmjs.org', port: 443, connections: 1, bytesSent: 10, bytesReceived: 20 }],
  },
  closedClasses: [{ class: 'shared-memory', evidence: 'sem_open refused', remedy: '--shared-memory' }],
  removedEnv: ['AWS_SECRET_ACCESS_KEY'],
}
const run: ShellRunResult = {
  exitCode: null,
  signal: 'SIGKILL',
  timedOut: true,
  aborted: false,
  timeoutMs: 1000,
  stdout: { text: 'x', truncated: true, spillPath: '/s/out' },
  stderr: { text: '', truncated: false },
  sandbox,
}
const job: JobInfo = {
  id: 'job-1',
  command: 'sleep 1',
  workdir: '/w',
  owner: { sessionId: 's', agent: 'a' },
  callId: '3',
  status: 'completed',
  exitCode: 0,
  signal: null,
  sandbox,
}

describe('output schemas and structured content', () => {
  it('every tool with a schema has an object schema, closed, without $schema', () => {
    for (const tool of ['bash', 'job_output', 'job_kill']) {
      expect(outputSchemaOf(tool)).toMatchObject({ type: 'object', additionalProperties: false })
      expect(outputSchemaOf(tool)).not.toHaveProperty('$schema')
      expect(outputValidatorOf(tool)).toBeDefined()
    }
    expect(outputSchemaOf('sandbox_refusals')).toBeUndefined()
    expect(structuredContentOf('sandbox_refusals', { content: 'x', isError: false })).toBeUndefined()
  })

  it('a run with every fact present validates, and carries those the schema names', () => {
    const facts = structuredContentOf('bash', { content: 'x', isError: false, result: run } as ToolResult)!
    expect(check('bash', facts)).toMatchObject({ valid: true })
    expect(facts).toEqual({
      run: {
        exitCode: null,
        signal: 'SIGKILL',
        timedOut: true,
        aborted: false,
        timeoutMs: 1000,
        stdout: { truncated: true, spillPath: '/s/out' },
        stderr: { truncated: false },
        sandbox: {
          mode: 'workspace-write',
          backend: 'bubblewrap',
          enforcement: 'partial',
          denied: true,
          deniedFor: ['files', 'network'],
          deniedPaths: ['/etc/x'],
          refusedPaths: ['/etc/x', '/etc/y'],
          runnerFailed: false,
          networkRefused: [{ host: 'evil.example', port: 443, count: 2, reason: 'not-allowed' }],
          networkRefusedOmitted: 3,
          closedClasses: [{ class: 'shared-memory', evidence: 'sem_open refused', remedy: '--shared-memory' }],
        },
      },
    })
    expect(outputValidatorOf('bash')!.parse(facts)).toEqual(facts)
  })

  it('a job (bash and the job tools) and every error code validate', () => {
    expect(check('bash', structuredContentOf('bash', { content: 'x', isError: false, job } as never))).toMatchObject({
      valid: true,
    })
    for (const tool of ['job_output', 'job_kill'])
      expect(check(tool, structuredContentOf(tool, { content: 'x', isError: false, job } as never))).toMatchObject({
        valid: true,
      })
    for (const code of TOOL_ERROR_CODES) {
      const facts = structuredContentOf('bash', { content: 'no', isError: true, code })
      expect(facts).toEqual({ code })
      expect(check('bash', facts)).toMatchObject({ valid: true })
    }
  })

  it('rejects an unknown field, a wrong type and an unknown code: the schema is closed', () => {
    const facts = structuredContentOf('bash', { content: 'x', isError: false, result: run } as ToolResult) as {
      run: Record<string, unknown>
    }
    expect(check('bash', { ...facts, extra: 1 }).valid).toBe(false)
    expect(check('bash', { run: { ...facts.run, exitCode: '1' } }).valid).toBe(false)
    expect(check('bash', { run: { ...facts.run, sandbox: { mode: 'read-only', denied: false, x: 1 } } }).valid).toBe(
      false,
    )
    expect(check('job_kill', { code: 'NOT_A_CODE' }).valid).toBe(false)
  })

  it('the tools/call result: text, isError, and structured content only where there is a schema', () => {
    expect(callToolResult('job_kill', { content: 'gone', isError: true, code: 'JOB_NOT_FOUND' })).toEqual({
      content: [{ type: 'text', text: 'gone' }],
      isError: true,
      structuredContent: { code: 'JOB_NOT_FOUND' },
    })
    expect(callToolResult('other', { content: 'hi', isError: false })).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      isError: false,
    })
  })
})
