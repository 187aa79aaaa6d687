// What each executor call brings is checked before anything starts: a JavaScript caller's wrong
// type in a request or a hand-made spec is an InvalidRequestError naming the field, never a
// TypeError from inside (node:path on a null workdir) nor a value taken as something else (an
// env string spread into variables named 0, 1, 2).
import { describe, expect, it } from 'vitest'
import { checkShellRequest, checkShellSpec, executorConfig } from '../../../src/shell/executor-options.js'
import { LocalShellExecutor, type ShellSandbox } from '../../../src/shell/executor.js'
import { invalid } from '../../support/invalid.js'

/** A sandbox no call here may reach: the checks come first. */
const unreachable: ShellSandbox = {
  confine() {
    throw new Error('confine reached: the check let a bad call through')
  },
}

describe('the checks of a request and a spec', () => {
  it('name each bad field of a request, as `request.field`', () => {
    expect(invalid(() => checkShellRequest({ command: 42 }, false)).issues).toEqual([
      'request.command: must be a string without NUL bytes',
    ])
    expect(invalid(() => checkShellRequest({ command: 'true', workdir: null, env: 'abc' }, false)).issues).toEqual([
      'request.workdir: must be a path without NUL bytes',
      'request.env: must be an object of string values',
    ])
    expect(invalid(() => checkShellRequest({ command: 'a\0b', stdoutMaxBytes: 2 ** 60 }, false)).issues).toEqual([
      'request.command: must be a string without NUL bytes',
      'request.stdoutMaxBytes: must be a positive whole number of bytes',
    ])
    expect(invalid(() => checkShellRequest(null, false)).issues[0]).toMatch(/^request: must be an object/)
    expect(() =>
      checkShellRequest({ command: 'true', workdir: 'rel', env: { A: 'b', B: undefined } }, false),
    ).not.toThrow()
  })

  it('a confining executor also checks the policy, by its fields; one that does not confine ignores it', () => {
    const request = { command: 'true', sandboxPolicy: { mode: 'root', workspaceRoot: '/w', extra: 10n } }
    const issues = invalid(() => checkShellRequest(request, true)).issues
    expect(issues.some((i) => i.startsWith('request.sandboxPolicy.mode: '))).toBe(true)
    expect(issues.some((i) => i.startsWith('request.sandboxPolicy: '))).toBe(true)
    expect(() => checkShellRequest(request, false)).not.toThrow()
  })

  it('a spec needs an absolute workdir; run also a timer’s timeout and a budget, which start ignores', () => {
    const spec = { command: 'true', workdir: 'rel', timeoutMs: Number.NaN, stdoutMaxBytes: {} }
    expect(invalid(() => checkShellSpec(spec, { foreground: true, confined: false })).issues).toEqual([
      'spec.workdir: must be an absolute path without NUL bytes',
      'spec.timeoutMs: must be a positive number of ms, at most 2147483647',
      'spec.stdoutMaxBytes: must be a positive whole number of bytes',
    ])
    expect(invalid(() => checkShellSpec(spec, { foreground: false, confined: false })).issues).toEqual([
      'spec.workdir: must be an absolute path without NUL bytes',
    ])
    expect(invalid(() => checkShellSpec({ command: 'true' }, { foreground: true, confined: false })).issues).toEqual([
      'spec.workdir: required',
      'spec.timeoutMs: required',
      'spec.stdoutMaxBytes: required',
    ])
  })

  it('the executor runs them first: resolve, run and start throw them, and confine is never asked', async () => {
    const executor = new LocalShellExecutor({ cwd: '/', sandbox: unreachable })
    expect(invalid(() => executor.resolve({ command: 'true', workdir: null as never })).issues).toEqual([
      'request.workdir: must be a path without NUL bytes',
    ])
    const spec = { ...executor.resolve({ command: 'true' }), sandboxPolicy: { mode: 'read-only' } as never }
    await expect(executor.run(spec)).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
    expect(invalid(() => executor.start(spec)).issues[0]).toMatch(/^spec\.sandboxPolicy\.workspaceRoot: /)
    await expect(executor.run(null as never)).rejects.toMatchObject({
      issues: ['spec: must be an object (what resolve returns)'],
    })
  })
})

describe('executorConfig', () => {
  it('fills the defaults and names every bad option', () => {
    expect(executorConfig({ cwd: '/w' })).toMatchObject({ cwd: '/w', workspaceRoot: '/w', environment: 'scrubbed' })
    const issues = invalid(() => executorConfig({ cwd: 'rel', graceMs: 0 })).issues.join('\n')
    expect(issues).toMatch(/^cwd: /m)
    expect(issues).toMatch(/^graceMs: /m)
  })
})
