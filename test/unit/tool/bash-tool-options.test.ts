// createBashTool / createBashTools validate their options at the boundary: a missing or wrong
// option is an InvalidRequestError naming the field, never a TypeError from inside.
import { describe, expect, it } from 'vitest'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { ShellEnvRegistry } from '../../../src/shell/env-registry.js'
import { createBashTool } from '../../../src/tool/bash-tool.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { InMemoryJobs } from '../../../src/tool/jobs/in-memory.js'
import { bashToolContext } from '../../../src/tool/bash-tool-options.js'
import { layerConfig } from '../../../src/policy/config/layers.js'
import { invalid } from '../../support/invalid.js'

const executor = new LocalShellExecutor({ cwd: '/' })

describe('bash tool options', () => {
  it('a missing executor is named', () => {
    for (const create of [createBashTool, createBashTools]) {
      const error = invalid(() => create({} as never))
      expect(error.code).toBe('INVALID_REQUEST')
      expect(error.issues).toEqual(['executor: required (a ShellExecutor: resolve, run, start)'])
      expect(error.message).toMatch(/^invalid bash tool options: executor: required/)
    }
    expect(invalid(() => createBashTool(undefined as never)).issues).toEqual([
      '(root): expected an options object ({ executor, approval?, workspaceRoot?, jobs?, shellEnv?, network?, refusalLog?, config? })',
    ])
  })

  it('every wrong option is named, with what it must be', () => {
    const error = invalid(() =>
      createBashTool({
        executor: { resolve: () => undefined, run: 'no', sandboxMode: 'sideways' },
        approval: { ask: () => 'yes' },
        workspaceRoot: 'relative/root',
        jobs: { start: () => undefined },
        shellEnv: {},
      } as never),
    )
    expect(error.issues).toEqual([
      'executor.run: must be a function',
      'executor.start: must be a function',
      'executor.sandboxMode: must be undefined or one of read-only, workspace-write, danger-full-access',
      'approval.request: must be a function',
      'workspaceRoot: must be an absolute path, got "relative/root"',
      'jobs.output: must be a function',
      'jobs.kill: must be a function',
      'jobs.list: must be a function',
      'shellEnv.collect: must be a function',
    ])
  })

  it('a config that is not a resolved one is named', () => {
    expect(invalid(() => createBashTool({ executor, config: { mode: 'read-only' } } as never)).issues).toEqual([
      'config: must be a resolved config (loadConfig, or LocalSandbox.config)',
    ])
  })

  it("a config's mode is a confining executor's default, its network the set's unless `network` is given", () => {
    const config = layerConfig(
      [{ source: { kind: 'user' }, settings: { mode: 'workspace-write', network: 'deny' } }],
      '/',
    )
    const confining = {
      resolve: () => undefined,
      run: () => undefined,
      start: () => undefined,
      sandboxMode: 'read-only',
    }
    expect(bashToolContext({ executor: confining as never, config })).toMatchObject({
      defaultMode: 'workspace-write',
      network: 'deny',
    })
    expect(bashToolContext({ executor: confining as never, config, network: 'inherit' }).network).toBe('inherit')
    expect(bashToolContext({ executor: confining as never }).defaultMode).toBe('read-only')
    // An executor that does not confine stays unconfined whatever the config says.
    expect(bashToolContext({ executor, config }).defaultMode).toBeUndefined()
  })

  it('an unknown option (a typo) is refused rather than ignored', () => {
    expect(invalid(() => createBashTool({ executor, aproval: {} } as never)).issues).toEqual([
      '(root): unknown option "aproval"',
    ])
  })

  it('valid options make a tool', () => {
    const jobs = new InMemoryJobs()
    const tool = createBashTool({
      executor,
      workspaceRoot: '/',
      approval: { request: async () => 'rejected' },
      jobs,
      shellEnv: new ShellEnvRegistry(),
    })
    expect(tool.name).toBe('bash')
    expect(createBashTools({ executor, jobs }).jobs).toBe(jobs)
  })

  it('the network option: inherit, deny or an allow-list whose every pattern parses', () => {
    for (const network of ['inherit', 'deny', { allow: ['a.example'], deny: ['b.a.example'] }] as const) {
      expect(createBashTool({ executor, network }).name).toBe('bash')
    }
    const error = invalid(() => createBashTool({ executor, network: { allow: ['ok.example', 'a b'] } } as never))
    expect(error.issues).toHaveLength(1)
    expect(error.issues[0]).toMatch(/^network(\.allow\.1)?: .*"a b"/)
    expect(invalid(() => createBashTool({ executor, network: 'open' } as never)).issues[0]).toMatch(/^network/)
  })
})
