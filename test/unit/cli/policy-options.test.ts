// The policy flags as policy fields: --protect, --unprotect and --no-default-protected (paths as
// given: a relative one is to the workspace root); a path that leaves the root is a usage error
// naming the field.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseWith, policyFrom } from '../../../src/cli/policy-options.js'
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
