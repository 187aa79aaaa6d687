// The policy flags as policy fields: --protect, --unprotect and --no-default-protected (paths as
// given: a relative one is to the workspace root); a path that leaves the root is a usage error
// naming the field.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { keptEnv, parseWith, policyFrom } from '../../../src/cli/policy-options.js'
import { scratchDir } from '../../support/scratch.js'

const root = fs.realpathSync(scratchDir('cordon-policy-options'))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const policyOf = (...args: string[]) => policyFrom(parseWith(args, {}).values, root).policy

describe('the protection flags', () => {
  it('--unprotect (repeatable) becomes unprotectedPaths beside --protect', () => {
    const policy = policyOf(
      '--mode',
      'workspace-write',
      '--protect',
      'ci',
      '--unprotect',
      '.vscode',
      '--unprotect',
      '.envrc',
    )
    expect(policy.protectedPaths).toEqual(['ci'])
    expect(policy.unprotectedPaths).toEqual(['.vscode', '.envrc'])
    expect(policy.protectedDefaults).toBeUndefined()
    expect(policyOf('--no-default-protected').protectedDefaults).toBe(false)
    expect(policyOf().unprotectedPaths).toBeUndefined()
  })

  it('an --unprotect path that leaves the root is a usage error naming the field', () => {
    expect(() => policyOf('--unprotect', '../elsewhere')).toThrow(
      expect.objectContaining({ name: 'UsageError', message: expect.stringMatching(/unprotectedPaths\[0\]/) }),
    )
    expect(policyOf('--unprotect', path.join(root, '.idea')).unprotectedPaths).toEqual([path.join(root, '.idea')])
  })
})

describe('a NUL byte in --root or --config', () => {
  it('is a usage error naming the flag (not a config file that "cannot be opened")', () => {
    expect(() => policyOf('--root', 'a\0b')).toThrow(/^--root: \$'a\\x00b' holds a NUL byte, which no path can$/)
    expect(() => policyOf('--config=\0')).toThrow(/^--config: \$'\\x00' holds a NUL byte/)
  })
})

describe('the host flags', () => {
  const usage = (...args: string[]) => {
    try {
      policyOf(...args)
    } catch (error) {
      expect(error).toMatchObject({ name: 'UsageError' })
      return (error as Error).message
    }
    throw new Error('no usage error')
  }

  it('--allow-host (repeatable) makes an allow-list; --deny-host narrows it', () => {
    expect(policyOf('--allow-host', 'example.com', '--allow-host', '*.npmjs.org:443').network).toEqual({
      allow: ['example.com', '*.npmjs.org:443'],
    })
    expect(policyOf('--allow-host', '*.example.com', '--deny-host', 'secret.example.com').network).toEqual({
      allow: ['*.example.com'],
      deny: ['secret.example.com'],
    })
    expect(policyOf().network).toBe('inherit')
    expect(policyOf('--network', 'deny').network).toBe('deny')
  })

  it('--deny-host without --allow-host is a usage error: a deny list only narrows an allow-list', () => {
    expect(usage('--deny-host', 'evil.example')).toMatch(/^--deny-host: only narrows an allow-list/)
    expect(usage('--network', 'deny', '--deny-host', 'evil.example')).toMatch(/^--deny-host:/)
  })

  it('--allow-host with --network inherit or deny is a usage error', () => {
    for (const network of ['inherit', 'deny']) {
      expect(usage('--network', network, '--allow-host', 'a.example')).toContain(`drop --network ${network}`)
    }
  })

  it('every bad pattern is named with why, nothing else decided', () => {
    const message = usage(
      '--allow-host',
      'ok.example',
      '--allow-host',
      'a b',
      '--deny-host',
      'x:0',
      '--allow-host',
      '*',
    )
    expect(message.split('\n')).toEqual([
      '3 host patterns do not parse:',
      `  --allow-host 'a b': "a b" is not a host name or an IP address`,
      '  --allow-host \'*\': a pattern names a host; to keep every host, use network "inherit"',
      '  --deny-host x:0: the port must be a number from 1 to 65535 (got "0")',
    ])
    expect(usage('--allow-host', 'a.*.example')).toBe(
      `--allow-host 'a.*.example': a wildcard stands only first, as "*." before a name`,
    )
  })

  it('a hostile pattern is shown escaped', () => {
    expect(usage('--allow-host', 'a\x1b]0;x\x07')).toBe(
      `--allow-host $'a\\x1b]0;x\\x07': "a\\x1b]0;x\\x07" is not a host name or an IP address`,
    )
  })
})

describe('--keep-env', () => {
  const flagsOf = (...args: string[]) => policyFrom(parseWith(args, {}).values, root)

  it('is repeatable, names only; keptEnv makes them explicit entries, leaving out a name the host lacks', () => {
    expect(flagsOf().keepEnv).toEqual([])
    const names = flagsOf('--keep-env', 'DEPLOY_API_KEY', '--keep-env', 'NPM_TOKEN').keepEnv
    expect(names).toEqual(['DEPLOY_API_KEY', 'NPM_TOKEN'])
    expect(keptEnv(names, { DEPLOY_API_KEY: 'k', OTHER: 'o' })).toEqual({ DEPLOY_API_KEY: 'k' })
  })

  it('a word that cannot be a variable name is a usage error, shown escaped', () => {
    for (const bad of ['', 'A=B', 'A\0B'])
      expect(() => flagsOf('--keep-env', bad)).toThrow(
        expect.objectContaining({ name: 'UsageError', message: expect.stringMatching(/^--keep-env: /) }),
      )
    expect(() => flagsOf('--keep-env', 'A=\x1b[2J')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('\x1b') }),
    )
  })
})

describe('the config files under the flags', () => {
  /** A fresh home with a user config dir, a workspace, and cordon's private dir, all scratch. */
  function place() {
    const base = scratchDir('cordon-cli-config')
    const ws = path.join(base, 'ws')
    fs.mkdirSync(path.join(base, 'cfg', 'cordon'), { recursive: true })
    fs.mkdirSync(ws)
    const env = { XDG_CONFIG_HOME: path.join(base, 'cfg'), HOME: base, CORDON_PRIVATE_DIR: path.join(base, 'private') }
    const write = (file: string, value: unknown) => fs.writeFileSync(file, JSON.stringify(value))
    return {
      base,
      ws,
      user: (v: unknown) => write(path.join(base, 'cfg', 'cordon', 'config.json'), v),
      project: (v: unknown) => write(path.join(ws, '.cordon.json'), v),
      flags: (...args: string[]) => policyFrom(parseWith(args, {}).values, ws, env),
    }
  }

  it('a config fills what the flags do not give; a flag overrides it', () => {
    const p = place()
    p.user({ mode: 'workspace-write', network: 'deny', limits: { processes: 64 }, hiddenPaths: ['.env'] })
    const f = p.flags()
    expect(f.policy).toMatchObject({ mode: 'workspace-write', network: 'deny', limits: { processes: 64 } })
    expect(f.policy.hiddenPaths).toContain(path.join(p.ws, '.env'))
    expect(f.config.sources.mode.kind).toBe('user')
    const over = p.flags('--mode', 'read-only', '--network', 'inherit', '--hide', 'other')
    expect(over.policy).toMatchObject({ mode: 'read-only', network: 'inherit' })
    expect(over.policy.hiddenPaths).toEqual([path.join(p.ws, '.env'), path.join(p.ws, 'other')])
    expect(over.config.sources.mode).toEqual({ kind: 'flags' })
  })

  it('--writable is meaningful when the config gives workspace-write, and replaces its roots', () => {
    const p = place()
    const data = path.join(p.base, 'data')
    const other = path.join(p.base, 'other')
    for (const d of [data, other]) fs.mkdirSync(d)
    p.user({ mode: 'workspace-write', writableRoots: [data] })
    expect(p.flags().policy.writableRoots).toEqual([data])
    expect(p.flags('--writable', other).policy.writableRoots).toEqual([other])
  })

  it('--config FILE over the project config; a missing one is CONFIG_INVALID, not a usage error', () => {
    const p = place()
    p.project({ network: 'deny' })
    const file = path.join(p.base, 'ci.json')
    fs.writeFileSync(file, '{"network": {"allow": ["registry.npmjs.org"]}}')
    expect(p.flags().policy.network).toBe('deny')
    expect(p.flags('--config', file).policy.network).toEqual({ allow: ['registry.npmjs.org'] })
    expect(() => p.flags('--config', path.join(p.base, 'nope.json'))).toThrow(
      expect.objectContaining({ name: 'ConfigInvalidError', code: 'CONFIG_INVALID' }),
    )
  })

  it('a project config changed wider is refused until --accept-config; one wider than the user config always', () => {
    const p = place()
    p.user({ mode: 'workspace-write' })
    p.project({ network: 'deny' })
    expect(p.flags().policy.network).toBe('deny')
    p.project({})
    expect(() => p.flags()).toThrow(expect.objectContaining({ name: 'ConfigWidenedError', against: 'record' }))
    expect(p.flags('--accept-config').policy.network).toBe('inherit')
    p.project({ mode: 'danger-full-access' })
    expect(() => p.flags('--accept-config')).toThrow(expect.objectContaining({ against: 'layers' }))
  })
})
