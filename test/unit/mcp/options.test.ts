// createMcpServer's options checked at the boundary: every bad, missing or unknown field named in
// one InvalidRequestError, the bash tools' options included; `approval` refused by name.
import { describe, expect, it } from 'vitest'
import { checkMcpServerOptions, createMcpServer } from '../../../src/mcp/index.js'
import { isInvalidRequestError } from '../../../src/policy/errors.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'

const executor = new LocalShellExecutor({ cwd: '/' })

/** The issues checkMcpServerOptions names for `options` (none when it accepts them). */
function issuesOf(options: unknown): readonly string[] {
  try {
    checkMcpServerOptions(options)
    return []
  } catch (error) {
    if (!isInvalidRequestError(error)) throw error
    return error.issues
  }
}

describe('checkMcpServerOptions', () => {
  it('accepts the bash tools options and its own', () => {
    expect(issuesOf({ executor })).toEqual([])
    expect(
      issuesOf({
        executor,
        workspaceRoot: '/tmp',
        network: 'deny',
        name: 'n',
        version: '1',
        agent: 'a',
        dispose: () => undefined,
        approvalTimeoutMs: 1000,
      }),
    ).toEqual([])
    expect(issuesOf({ executor, dispose: { dispose: async () => undefined } })).toEqual([])
  })

  it('names every bad field at once, its own and the tools', () => {
    const issues = issuesOf({
      executor: {},
      workspaceRoot: 'relative',
      agent: '',
      dispose: 42,
      approvalTimeoutMs: -1,
      approval: { request: async () => 'allowed-once' },
      bogus: true,
    })
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^approval: not an option here/),
        expect.stringMatching(/^agent: must not be empty/),
        expect.stringMatching(/^dispose: must be a function or an object with dispose\(\)/),
        expect.stringMatching(/^approvalTimeoutMs: must be positive/),
        expect.stringMatching(/^executor\./),
        expect.stringMatching(/^workspaceRoot: must be an absolute path/),
        '(root): unknown option "bogus"',
      ]),
    )
  })

  it('refuses a non-object, and createMcpServer throws before it builds anything', () => {
    expect(issuesOf(null)).toEqual(['(root): expected an options object ({ executor, workspaceRoot?, ... })'])
    expect(() => createMcpServer({ executor, approvalTimeoutMs: 0 })).toThrow(/invalid MCP server options/)
  })
})
