import os from 'node:os'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { DSH_KEY_PATTERN, RESERVED_DSH_KEYS, ShellEnvRegistry } from '../../../src/shell/env-registry.js'
import type { BashEnvContributor } from '../../../src/shell/types.js'
import { invalid } from '../../support/invalid.js'

const web: BashEnvContributor = {
  name: 'web-app',
  variables: [{ key: 'DSH_WEB_URL', description: 'URL of the running web app' }],
  resolve: () => ({ DSH_WEB_URL: 'http://localhost:3000' }),
}

describe('ShellEnvRegistry built-ins', () => {
  it('collects DSH_HOME and DSH_SHELL=1, and DSH_SESSION_ID only with a session', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h/.dsh' })
    expect(registry.collect({})).toEqual({ DSH_HOME: '/h/.dsh', DSH_SHELL: '1' })
    expect(registry.collect({ sessionId: 's-42' })).toEqual({
      DSH_HOME: '/h/.dsh',
      DSH_SESSION_ID: 's-42',
      DSH_SHELL: '1',
    })
  })

  it('DSH_HOME: config, else a non-blank $DSH_HOME, else ~/.dsh', () => {
    expect(new ShellEnvRegistry({ dshHome: '/cfg', env: { DSH_HOME: '/env' } }).home).toBe('/cfg')
    expect(new ShellEnvRegistry({ env: { DSH_HOME: '/env' } }).home).toBe('/env')
    expect(new ShellEnvRegistry({ env: { DSH_HOME: '  ' }, homeDir: '/home/u' }).home).toBe('/home/u/.dsh')
    expect(new ShellEnvRegistry({ env: {}, homeDir: '/home/u' }).home).toBe('/home/u/.dsh')
    expect(new ShellEnvRegistry({ env: {} }).home).toBe(path.join(os.homedir(), '.dsh'))
  })

  it('reserves the built-in keys', () => {
    expect([...RESERVED_DSH_KEYS]).toEqual(['DSH_HOME', 'DSH_SESSION_ID', 'DSH_SHELL'])
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    for (const key of RESERVED_DSH_KEYS) {
      const error = invalid(() =>
        registry.register({ name: `steal-${key}`, variables: [{ key, description: 'd' }], resolve: () => ({}) }),
      )
      expect(error.issues).toEqual([`variables[0].key: ${key} is reserved for the registry`])
    }
  })
})

describe('ShellEnvRegistry contributors', () => {
  it('merges contributions into a frozen snapshot sorted by key', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    registry.register(web)
    registry.register({
      name: 'alpha',
      variables: [
        { key: 'DSH_A_FIRST', description: 'first' },
        { key: 'DSH_Z_LAST', description: 'last' },
      ],
      resolve: (execution) => ({ DSH_A_FIRST: execution.callId ?? 'none', DSH_Z_LAST: 'z' }),
    })
    const snapshot = registry.collect({ sessionId: 's', callId: 'c1' })
    expect(Object.keys(snapshot)).toEqual([
      'DSH_A_FIRST',
      'DSH_HOME',
      'DSH_SESSION_ID',
      'DSH_SHELL',
      'DSH_WEB_URL',
      'DSH_Z_LAST',
    ])
    expect(snapshot.DSH_A_FIRST).toBe('c1')
    expect(Object.isFrozen(snapshot)).toBe(true)
  })

  it('a declared key a resolver leaves out (or sets undefined) is simply absent', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    registry.register({ ...web, resolve: () => ({ DSH_WEB_URL: undefined }) })
    registry.register({ name: 'quiet', variables: [{ key: 'DSH_QUIET', description: 'q' }], resolve: () => undefined })
    expect(registry.collect({})).toEqual({ DSH_HOME: '/h', DSH_SHELL: '1' })
  })

  it('rejects duplicate names and keys', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    registry.register(web)
    expect(invalid(() => registry.register({ ...web })).issues).toEqual([
      'name: contributor "web-app" is already registered',
      'variables[0].key: DSH_WEB_URL is already declared by "web-app"',
    ])
    expect(
      invalid(() =>
        registry.register({
          name: 'twice',
          variables: [
            { key: 'DSH_X', description: 'x' },
            { key: 'DSH_X', description: 'x again' },
          ],
          resolve: () => ({}),
        }),
      ).issues,
    ).toEqual(['variables[1].key: DSH_X is declared twice'])
  })

  it('rejects malformed declarations, listing every problem', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    const error = invalid(() =>
      registry.register({
        name: ' ',
        variables: [
          { key: 'WEB_URL' as never, description: 'no prefix' },
          { key: 'DSH_lower' as never, description: 'lower case' },
          { key: 'DSH_1ST' as never, description: 'digit first' },
          { key: 'DSH_OK', description: '  ' },
        ],
        resolve: 'nope' as never,
      }),
    )
    expect(error.issues).toEqual([
      'name: must be a non-blank string',
      'resolve: must be a function',
      'variables[0].key: "WEB_URL" must match DSH_[A-Z][A-Z0-9_]*',
      'variables[1].key: "DSH_lower" must match DSH_[A-Z][A-Z0-9_]*',
      'variables[2].key: "DSH_1ST" must match DSH_[A-Z][A-Z0-9_]*',
      'variables[3].description: must be a non-blank string',
    ])
    expect(registry.list()).toEqual([])
  })

  it('the key pattern is DSH_ then [A-Z][A-Z0-9_]*', () => {
    for (const good of ['DSH_A', 'DSH_WEB_URL', 'DSH_X9_', 'DSH_SESSION_JSONL'])
      expect(DSH_KEY_PATTERN.test(good)).toBe(true)
    for (const bad of ['DSH_', 'DSH__A', 'DSH_9', 'dsh_A', 'DSH_A-B', 'XDSH_A', 'DSH_A\n'])
      expect(DSH_KEY_PATTERN.test(bad)).toBe(false)
  })

  it('refuses undeclared or non-string values, naming the contributor', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    registry.register({ ...web, resolve: () => ({ DSH_WEB_URL: 'u', DSH_OTHER: 'x' }) })
    const error = invalid(() => registry.collect({}))
    expect(error.issues).toEqual(['DSH_OTHER: not declared by this contributor'])
    expect(error.message).toContain('"web-app"')

    const other = new ShellEnvRegistry({ dshHome: '/h' })
    other.register({ ...web, resolve: () => ({ DSH_WEB_URL: 3000 as unknown as string }) })
    expect(invalid(() => other.collect({})).issues).toEqual(['DSH_WEB_URL: value must be a string, got number'])
  })

  it('the disposer unregisters, frees the keys, and is idempotent', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    const dispose = registry.register(web)
    expect(registry.collect({}).DSH_WEB_URL).toBe('http://localhost:3000')
    dispose()
    expect(registry.collect({})).not.toHaveProperty('DSH_WEB_URL')
    expect(registry.list()).toEqual([])
    const again = registry.register({ ...web, resolve: () => ({ DSH_WEB_URL: 'second' }) })
    dispose() // a stale disposer must not remove the new registration
    expect(registry.collect({}).DSH_WEB_URL).toBe('second')
    again()
    again()
    expect(registry.list()).toEqual([])
  })

  it('list() enumerates declarations sorted by key without running resolvers', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    const resolve = vi.fn(() => ({}))
    registry.register({ name: 'b', variables: [{ key: 'DSH_B', description: 'bee' }], resolve })
    registry.register({
      name: 'a',
      variables: [
        { key: 'DSH_C', description: 'sea' },
        { key: 'DSH_A', description: 'ay' },
      ],
      resolve,
    })
    expect(registry.list()).toEqual([
      { key: 'DSH_A', description: 'ay', contributor: 'a' },
      { key: 'DSH_B', description: 'bee', contributor: 'b' },
      { key: 'DSH_C', description: 'sea', contributor: 'a' },
    ])
    expect(resolve).not.toHaveBeenCalled()
  })

  it('declarations are copied at registration', () => {
    const registry = new ShellEnvRegistry({ dshHome: '/h' })
    const variables = [{ key: 'DSH_M' as const, description: 'm' }]
    registry.register({ name: 'm', variables, resolve: () => ({ DSH_M: 'v' }) })
    variables[0]!.description = 'changed'
    variables.push({ key: 'DSH_N' as never, description: 'n' })
    expect(registry.list()).toEqual([{ key: 'DSH_M', description: 'm', contributor: 'm' }])
  })
})
