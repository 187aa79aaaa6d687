// explainEnvScrub: the dropped names with their rules, never a value, and in agreement with what
// scrubbedParentEnv + mergeEnv really hand the child.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mergeEnv, scrubbedParentEnv } from '../../../../src/subprocess/env/scrub.js'
import { explainEnvScrub, removedCredentialNames } from '../../../../src/subprocess/env/explain.js'

const parent: NodeJS.ProcessEnv = {
  PATH: '/usr/bin',
  EDITOR: 'vi',
  DSH_HOME: '/h',
  OPENAI_API_KEY: 'sk-value-must-not-appear-anywhere-0123',
  DATABASE_URL: 'postgres://app:value-must-not-appear@db/app',
  SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1',
  TERM: 'xterm',
  GONE: undefined,
}

describe('explainEnvScrub', () => {
  it('lists each dropped name with its rule, sorted, and no value', () => {
    const dropped = explainEnvScrub(parent)
    expect(dropped).toEqual([
      { name: 'DATABASE_URL', rule: 'credential-value', detail: 'URL with a password' },
      { name: 'DSH_HOME', rule: 'managed-namespace', detail: 'ambient DSH_* (harness-owned)' },
      { name: 'OPENAI_API_KEY', rule: 'credential-name', detail: 'name token KEY' },
      { name: 'SSH_AUTH_SOCK', rule: 'agent-socket', detail: 'agent or control socket' },
    ])
    expect(JSON.stringify(dropped)).not.toMatch(/value-must-not-appear/)
  })

  it('in minimal mode adds what is off the allow-list', () => {
    const dropped = explainEnvScrub(parent, { environment: 'minimal' })
    expect(dropped.map((d) => [d.name, d.rule])).toEqual([
      ['DATABASE_URL', 'not-in-minimal'],
      ['DSH_HOME', 'managed-namespace'],
      ['EDITOR', 'not-in-minimal'],
      ['OPENAI_API_KEY', 'not-in-minimal'],
      ['SSH_AUTH_SOCK', 'not-in-minimal'],
    ])
  })

  it('leaves out what the caller sets explicitly and lists what it tombstones', () => {
    const dropped = explainEnvScrub(parent, { env: { OPENAI_API_KEY: 'forwarded', TERM: undefined, NEW: 'x' } })
    expect(dropped.map((d) => d.name)).toEqual(['DATABASE_URL', 'DSH_HOME', 'SSH_AUTH_SOCK', 'TERM'])
    expect(dropped.at(-1)).toEqual({
      name: 'TERM',
      rule: 'caller-tombstone',
      detail: 'removed by the caller (undefined entry)',
    })
  })

  it('agrees with the environment the child gets', () => {
    const name = fc.oneof(
      fc.constantFrom(
        'PATH',
        'HOME',
        'LC_ALL',
        'DSH_X',
        'API_KEY',
        'PWD',
        'SSH_AUTH_SOCK',
        'EDITOR',
        'GIT_AUTHOR_NAME',
      ),
      fc.string({ minLength: 1, maxLength: 10 }),
    )
    const value = fc.oneof(fc.constantFrom('x', 'https://u:p@h/', `ghp_${'aB3d'.repeat(9)}`), fc.string())
    const overrides = fc.dictionary(name, fc.option(fc.string(), { nil: undefined }))
    const mode = fc.constantFrom('scrubbed' as const, 'minimal' as const)
    fc.assert(
      fc.property(fc.dictionary(name, value), overrides, mode, (parentEnv, env, environment) => {
        const child = mergeEnv(scrubbedParentEnv(parentEnv, environment), env)
        const dropped = new Set(explainEnvScrub(parentEnv, { environment, env }).map((d) => d.name))
        for (const key of Object.keys(parentEnv)) expect(dropped.has(key)).toBe(!Object.hasOwn(child, key))
      }),
    )
  })
})

describe('removedCredentialNames', () => {
  it('names the credentials a child does not get, sorted: not DSH_*, not the minimal list, not a caller’s removal, not CORDON_*', () => {
    const host = { ...parent, CORDON_PRIVATE_DIR: '/p', COREPACK_INTEGRITY_KEYS: '0', EDITOR_TOKEN: 'x' }
    expect(removedCredentialNames(host)).toEqual(['DATABASE_URL', 'EDITOR_TOKEN', 'OPENAI_API_KEY', 'SSH_AUTH_SOCK'])
    // An explicit entry passes a name on; a tombstone is the caller's own doing.
    expect(removedCredentialNames(host, { env: { OPENAI_API_KEY: 'kept', EDITOR: undefined } })).toEqual([
      'DATABASE_URL',
      'EDITOR_TOKEN',
      'SSH_AUTH_SOCK',
    ])
    // In minimal mode a name off the list is the mode's, not a credential's.
    expect(removedCredentialNames(host, { environment: 'minimal' })).toEqual([])
    expect(JSON.stringify(removedCredentialNames(host))).not.toMatch(/value-must-not-appear/)
  })
})
