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
