// A resolved config as resolvePolicy's input for one root: relative paths against that root,
// empty settings left out (a policy without config is what it always was), and resolvePolicy
// takes it as is (limits included).
import { describe, expect, it } from 'vitest'
import { layerConfig } from '../../../../src/policy/config/layers.js'
import { configPolicyInput } from '../../../../src/policy/config/policy-input.js'
import { resolvePolicy } from '../../../../src/policy/resolve.js'
import { scratchDir } from '../../../support/scratch.js'

const root = scratchDir('cordon-policy-input')

describe('configPolicyInput', () => {
  it('no config file: the mode and the network only', () => {
    expect(configPolicyInput(layerConfig([], root))).toEqual({ defaultMode: 'read-only', network: 'inherit' })
  })

  it('relative paths against the root given (else the config’s); protected ones stay relative; limits kept', () => {
    const config = layerConfig(
      [
        {
          source: { kind: 'user', file: '/u.json' },
          settings: {
            mode: 'workspace-write',
            writableRoots: ['/tmp'],
            hiddenPaths: ['.env', '/srv/secret'],
            protectedPaths: ['ci', '/x/y'],
            network: 'deny',
            limits: { processes: 64 },
          },
        },
      ],
      '/w',
    )
    expect(configPolicyInput(config)).toEqual({
      defaultMode: 'workspace-write',
      network: 'deny',
      writableRoots: ['/tmp'],
      hiddenPaths: ['/w/.env', '/srv/secret'],
      protectedPaths: ['ci', '/x/y'],
      limits: { processes: 64 },
    })
    expect(configPolicyInput(config, '/other').hiddenPaths).toEqual(['/other/.env', '/srv/secret'])
    const policy = resolvePolicy({ cwd: root, ...configPolicyInput(config, root) })
    expect(policy).toMatchObject({ mode: 'workspace-write', network: 'deny', limits: { processes: 64 } })
    expect(policy.hiddenPaths).toContain(`${root}/.env`)
  })
})
