import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  envDropReason,
  envToArray,
  isManagedEnvName,
  isMinimalEnvName,
  mergeEnv,
  scrubbedParentEnv,
} from '../../../../src/subprocess/env/scrub.js'
import { cannotBeSecret, isCredentialShapedName } from '../../../../src/subprocess/env/credentials.js'
import { invalid } from '../../../support/invalid.js'

describe('scrubbedParentEnv', () => {
  const parent: NodeJS.ProcessEnv = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/u',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    HTTPS_PROXY: 'http://proxy:3128',
    no_proxy: 'localhost',
    OPENAI_API_KEY: 'sk-1',
    aws_secret_access_key: 'x',
    GithubToken: 'ghp',
    DB_PASSWORD: 'pw',
    MONKEY: 'KEY glued to a non-credential word',
    DSH_HOME: '/home/u/.dsh',
    dsh_session_id: 'ambient',
    Dsh_Web_Url: 'http://x',
    GH_PASSPHRASE: 'pp',
    DATABASE_URL: 'postgres://app:pw@db/app',
    SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1',
    GIT_AUTHOR_NAME: 'A U Thor',
    EMPTY: '',
    GONE: undefined,
  }

  it('drops credentials, agent sockets and every DSH_* name, case-insensitively', () => {
    const env = scrubbedParentEnv(parent)
    expect({ ...env }).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      HTTPS_PROXY: 'http://proxy:3128',
      no_proxy: 'localhost',
      MONKEY: 'KEY glued to a non-credential word',
      GIT_AUTHOR_NAME: 'A U Thor',
      EMPTY: '',
    })
  })

  it('minimal mode keeps only the allow-list and LC_*, and still drops a secret value on it', () => {
    const env = scrubbedParentEnv(
      {
        ...parent,
        USER: 'u',
        LOGNAME: 'u',
        SHELL: '/bin/bash',
        TZ: 'UTC',
        TERM: 'xterm',
        TMPDIR: '/tmp/s',
        LC_CTYPE: 'C.UTF-8',
        EDITOR: 'vi',
        lang: 'lower-case is another name',
        TZ_LEAK: 'not TZ',
      },
      'minimal',
    )
    expect({ ...env }).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      USER: 'u',
      LOGNAME: 'u',
      SHELL: '/bin/bash',
      TZ: 'UTC',
      TERM: 'xterm',
      TMPDIR: '/tmp/s',
      LC_CTYPE: 'C.UTF-8',
    })
    expect({ ...scrubbedParentEnv({ HOME: 'https://u:pw@h/' }, 'minimal') }).toEqual({})
    expect(isMinimalEnvName('LC_TIME')).toBe(true)
    expect(isMinimalEnvName('LCX')).toBe(false)
  })

  it('says which rule dropped a name', () => {
    expect(envDropReason('DSH_X', 'v')).toEqual({ rule: 'managed-namespace', detail: 'ambient DSH_* (harness-owned)' })
    expect(envDropReason('DSH_X', 'v', 'minimal')?.rule).toBe('managed-namespace')
    expect(envDropReason('EDITOR', 'vi', 'minimal')).toEqual({
      rule: 'not-in-minimal',
      detail: 'not on the minimal allow-list',
    })
    expect(envDropReason('EDITOR', 'vi')).toBeUndefined()
    expect(envDropReason('REDIS_URL', 'redis://:pw@h')?.detail).toBe('URL with a password')
  })

  it('keeps a value that cannot be a secret whatever its name, but never an ambient DSH_* or, in minimal mode, a name off the list', () => {
    const switches = {
      COREPACK_INTEGRITY_KEYS: '0',
      FEATURE_TOKEN: 'On',
      DB_PASSWORD: '',
      SSH_AUTH_SOCK: 'no',
      API_KEY: 'TRUE',
    }
    expect({ ...scrubbedParentEnv(switches) }).toEqual(switches)
    expect(envDropReason('DSH_FLAG', '1')?.rule).toBe('managed-namespace')
    expect(envDropReason('API_KEY', '1', 'minimal')?.rule).toBe('not-in-minimal')
    // The same names with a value that could be one are dropped.
    expect(envDropReason('COREPACK_INTEGRITY_KEYS', '2')?.rule).toBe('credential-name')
    expect(envDropReason('API_KEY', 'truest')?.rule).toBe('credential-name')
  })

  it('rescans a value that changed under a name already seen clean', () => {
    expect(envDropReason('CORDON_TEST_MEMO', 'plain')).toBeUndefined()
    expect(envDropReason('CORDON_TEST_MEMO', 'plain')).toBeUndefined()
    expect(envDropReason('CORDON_TEST_MEMO', 'https://u:pw@h/')?.rule).toBe('credential-value')
    expect(envDropReason('CORDON_TEST_MEMO', 'https://u:pw@h/')?.rule).toBe('credential-value')
    expect(envDropReason('CORDON_TEST_MEMO', 'plain')).toBeUndefined()
  })

  it('minimal is never wider than scrubbed, and neither lets an ambient DSH_* through', () => {
    const name = fc.oneof(
      fc.constantFrom('PATH', 'HOME', 'LC_ALL', 'TERM', 'DSH_X', 'dsh_y', 'API_KEY', 'PWD', 'SSH_AUTH_SOCK', 'EDITOR'),
      fc.string({ minLength: 1, maxLength: 12 }),
    )
    const value = fc.oneof(fc.constantFrom('x', 'https://u:p@h/', 'AKIAIOSFODNN7EXAMPLE'), fc.string())
    fc.assert(
      fc.property(fc.dictionary(name, value), (parent) => {
        const scrubbed = scrubbedParentEnv(parent)
        const minimal = scrubbedParentEnv(parent, 'minimal')
        for (const key of Object.keys(minimal)) expect(scrubbed[key]).toBe(parent[key])
        for (const key of Object.keys(scrubbed)) {
          expect(scrubbed[key]).toBe(parent[key])
          expect(isManagedEnvName(key)).toBe(false)
        }
      }),
    )
  })

  it('does not mutate its input and defaults to process.env', () => {
    const copy = { ...parent }
    scrubbedParentEnv(parent)
    expect(parent).toEqual(copy)
    const fromProcess = scrubbedParentEnv()
    expect(fromProcess.PATH).toBe(process.env.PATH)
    for (const name of Object.keys(fromProcess)) {
      // A credential name survives only with a value that cannot be a secret.
      expect(
        (isCredentialShapedName(name) && !cannotBeSecret(fromProcess[name] ?? 'x')) || isManagedEnvName(name),
      ).toBe(false)
    }
  })

  it('classifies names', () => {
    expect(isCredentialShapedName('api_key')).toBe(true)
    expect(isCredentialShapedName('Secret')).toBe(true)
    expect(isCredentialShapedName('PATH')).toBe(false)
    expect(isCredentialShapedName('MONKEY')).toBe(false)
    expect(isManagedEnvName('dsh_x')).toBe(true)
    expect(isManagedEnvName('XDSH_')).toBe(false)
  })
})

describe('mergeEnv', () => {
  it('a caller’s explicit string survives either mode, credential or not', () => {
    const parent = { PATH: '/bin', GITHUB_TOKEN: 'ambient', SSH_AUTH_SOCK: '/a', EDITOR: 'vi' }
    const explicit = { GITHUB_TOKEN: 'forwarded', SSH_AUTH_SOCK: '/forwarded', EDITOR: 'nano', DSH_SESSION_ID: 's' }
    for (const mode of ['scrubbed', 'minimal'] as const) {
      expect({ ...mergeEnv(scrubbedParentEnv(parent, mode), explicit) }).toEqual({ PATH: '/bin', ...explicit })
    }
  })

  it('sets strings, deletes on undefined tombstones, and lets explicit credentials and DSH_* through', () => {
    const base = scrubbedParentEnv({ PATH: '/bin', TERM: 'xterm', OPENAI_API_KEY: 'ambient', DSH_HOME: 'ambient' })
    const env = mergeEnv(base, {
      TERM: undefined,
      OPENAI_API_KEY: 'forwarded',
      DSH_SESSION_ID: 's1',
      NEW: 'v',
      NEVER_THERE: undefined,
    })
    expect({ ...env }).toEqual({ PATH: '/bin', OPENAI_API_KEY: 'forwarded', DSH_SESSION_ID: 's1', NEW: 'v' })
    expect(base.TERM).toBe('xterm') // input untouched
  })

  it('treats __proto__ as an ordinary name', () => {
    const overrides = JSON.parse('{"__proto__":"x"}') as Record<string, string>
    const env = mergeEnv({}, overrides)
    expect(Object.keys(env)).toEqual(['__proto__'])
    // biome-ignore lint/suspicious/noProto: the test is about an own property named __proto__
    expect(env.__proto__).toBe('x')
    expect(envToArray(env)).toEqual(['__proto__=x'])
  })

  it('rejects non-string values', () => {
    expect(invalid(() => mergeEnv({}, { A: 1 as unknown as string })).issues).toEqual([
      'env.A: must be a string or undefined, got number',
    ])
    expect(() => mergeEnv({}, { A: null as unknown as string })).toThrow(/null/)
  })

  it('returns a copy when there are no overrides', () => {
    const base = { A: '1' }
    const env = mergeEnv(base)
    expect({ ...env }).toEqual(base)
    env.A = '2'
    expect(base.A).toBe('1')
  })
})

describe('envToArray', () => {
  it('renders NAME=value and skips what execve cannot carry', () => {
    expect(
      envToArray({
        A: '1',
        B: '',
        C: 'x=y',
        U: undefined,
        'BAD=NAME': 'v',
        'NUL\0NAME': 'v',
        NULVAL: 'a\0b',
        '': 'empty name',
      }),
    ).toEqual(['A=1', 'B=', 'C=x=y'])
  })
})
