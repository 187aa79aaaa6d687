import { describe, expect, it } from 'vitest'
import {
  envToArray,
  isCredentialShapedName,
  isManagedEnvName,
  mergeEnv,
  scrubbedParentEnv,
} from '../../src/subprocess/env.js'

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
    MONKEY: 'contains key',
    DSH_HOME: '/home/u/.dsh',
    dsh_session_id: 'ambient',
    Dsh_Web_Url: 'http://x',
    GH_PASSPHRASE: 'leaks: name heuristic',
    EMPTY: '',
    GONE: undefined,
  }

  it('drops credential-shaped names and every DSH_* name, case-insensitively', () => {
    const env = scrubbedParentEnv(parent)
    expect({ ...env }).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      HTTPS_PROXY: 'http://proxy:3128',
      no_proxy: 'localhost',
      GH_PASSPHRASE: 'leaks: name heuristic',
      EMPTY: '',
    })
  })

  it('does not mutate its input and defaults to process.env', () => {
    const copy = { ...parent }
    scrubbedParentEnv(parent)
    expect(parent).toEqual(copy)
    const fromProcess = scrubbedParentEnv()
    expect(fromProcess.PATH).toBe(process.env.PATH)
    for (const name of Object.keys(fromProcess)) {
      expect(isCredentialShapedName(name) || isManagedEnvName(name)).toBe(false)
    }
  })

  it('classifies names', () => {
    expect(isCredentialShapedName('api_key')).toBe(true)
    expect(isCredentialShapedName('Secret')).toBe(true)
    expect(isCredentialShapedName('PATH')).toBe(false)
    expect(isManagedEnvName('dsh_x')).toBe(true)
    expect(isManagedEnvName('XDSH_')).toBe(false)
  })
})

describe('mergeEnv', () => {
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
    expect(() => mergeEnv({}, { A: 1 as unknown as string })).toThrow(TypeError)
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
