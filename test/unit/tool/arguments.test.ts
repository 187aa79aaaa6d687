// The exported zod schemas of the tools' arguments: what a model may send each tool, a strict
// caller's null read as "not given", and the same objects the tools validate with.
import { describe, expect, it } from 'vitest'
import {
  BashArgumentsSchema,
  BashArgumentsUnsandboxedSchema,
  JobKillArgumentsSchema,
  JobOutputArgumentsSchema,
  SandboxRefusalsArgumentsSchema,
} from '../../../src/tool/arguments.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'

describe('argument schemas', () => {
  it('accept what a model sends, nulls included, and refuse the rest by field', () => {
    expect(BashArgumentsSchema.parse({ command: 'ls', workdir: null, timeout_ms: null })).toMatchObject({
      command: 'ls',
    })
    expect(BashArgumentsSchema.safeParse({ command: '' }).error?.issues[0]?.path).toEqual(['command'])
    expect(BashArgumentsSchema.safeParse({ command: 'ls', sandbox_permissions: 'root' }).success).toBe(false)
    expect(Object.keys(BashArgumentsUnsandboxedSchema.shape)).not.toContain('sandbox_permissions')
    expect(JobOutputArgumentsSchema.safeParse({ job_id: 'job-1', wait_ms: -1 }).error?.issues[0]?.path).toEqual([
      'wait_ms',
    ])
    expect(JobKillArgumentsSchema.safeParse({}).success).toBe(false)
    expect(SandboxRefusalsArgumentsSchema.safeParse({ after_run: 1.5 }).success).toBe(false)
    expect(SandboxRefusalsArgumentsSchema.parse({ after_run: null, limit: 3 })).toEqual({ after_run: null, limit: 3 })
  })

  it('refuse a NUL byte in the command or the workdir by field (no process can take one)', () => {
    for (const args of [{ command: 'ls\0' }, { command: 'ls', workdir: 'a\0b' }]) {
      const issue = BashArgumentsSchema.safeParse(args).error?.issues[0]
      expect(issue?.path).toEqual([Object.keys(args).at(-1)])
      expect(issue?.message).toBe('must not contain a NUL byte')
    }
  })

  it('are the schemas the tools validate with', async () => {
    const executor = new LocalShellExecutor({ cwd: '/' })
    const set = createBashTools({ executor })
    expect(set.bash.argumentsSchema).toBe(BashArgumentsUnsandboxedSchema)
    expect(set.jobOutput.argumentsSchema).toBe(JobOutputArgumentsSchema)
    expect(set.jobKill.argumentsSchema).toBe(JobKillArgumentsSchema)
    expect(set.refusals.argumentsSchema).toBe(SandboxRefusalsArgumentsSchema)
    // Without a sandbox there is no log to read: the tool says so.
    expect(await set.refusals.execute({}, { callId: 'c' })).toMatchObject({ isError: true, code: 'TOOL_FAILED' })
    await executor.dispose()
  })
})
