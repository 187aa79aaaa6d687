import { describe, expect, it } from 'vitest'
import {
  CONFINED_SANDBOX_MODES,
  DEFAULT_SANDBOX_MODE,
  EFFECT_CLASSES,
  FILE_EFFECT_CLASSES,
  NETWORK_POLICIES,
  SANDBOX_ENFORCEMENTS,
  SANDBOX_MODES,
  isConfinedMode,
  isNormalAbsolutePath,
  isSandboxMode,
} from '../../../src/policy/vocabulary.js'
import {
  SANDBOX_EXECUTION_POLICY_JSON_SCHEMA,
  SandboxEnforcementSchema,
  SandboxExecutionPolicySchema,
  SandboxModeSchema,
  SandboxPolicySchema,
  EffectClassSchema,
} from '../../../src/policy/schema/exported.js'

describe('sandbox vocabulary', () => {
  it('has exactly the three modes, narrowest first, with read-only the default', () => {
    expect(SANDBOX_MODES).toEqual(['read-only', 'workspace-write', 'danger-full-access'])
    expect(DEFAULT_SANDBOX_MODE).toBe('read-only')
    expect(CONFINED_SANDBOX_MODES).toEqual(['read-only', 'workspace-write'])
  })

  it('confined modes are every mode but danger-full-access', () => {
    expect(SANDBOX_MODES.filter(isConfinedMode)).toEqual([...CONFINED_SANDBOX_MODES])
  })

  it('enforcement is full or partial; effect classes include every class a confined run promises', () => {
    expect(SANDBOX_ENFORCEMENTS).toEqual(['full', 'partial'])
    expect(EFFECT_CLASSES).toEqual([
      'content',
      'names',
      'metadata',
      'network',
      'processes',
      'ipc',
      'keyrings',
      'terminals',
      'lifetime',
      'resources',
      'secrets',
      'protected',
      'signals',
      'memory',
      'temp',
      'cpu',
    ])
    expect(FILE_EFFECT_CLASSES).toEqual(['content', 'names', 'metadata'])
    expect(NETWORK_POLICIES).toEqual(['inherit', 'deny'])
    expect(SandboxEnforcementSchema.safeParse('partial').success).toBe(true)
    expect(SandboxEnforcementSchema.safeParse('mostly').success).toBe(false)
    expect(EffectClassSchema.safeParse('signals').success).toBe(true)
  })

  it('rejects a mode outside the closed set', () => {
    for (const m of SANDBOX_MODES) expect(SandboxModeSchema.parse(m)).toBe(m)
    for (const bad of ['full-access', 'READ-ONLY', '', 'workspace_write', undefined, 1]) {
      expect(SandboxModeSchema.safeParse(bad).success).toBe(false)
      expect(isSandboxMode(bad)).toBe(false)
    }
  })

  it('validates a full policy with every extension', () => {
    const policy = {
      mode: 'workspace-write',
      workspaceRoot: '/work/repo',
      sessionId: 's-1',
      writableRoots: ['/work/cache'],
      network: 'deny',
      protectedPaths: ['/work/repo/.git'],
      hiddenPaths: ['/home/u/.ssh'],
      requireEnforcement: 'full',
    }
    expect(SandboxExecutionPolicySchema.parse(policy)).toEqual(policy)
  })

  it('reports every issue of a malformed policy, each with its field', () => {
    const result = SandboxExecutionPolicySchema.safeParse({
      mode: 'wide-open',
      workspaceRoot: 'relative/root',
      writableRoots: ['/ok', 'also/relative'],
      network: 'sometimes',
      extra: true,
    })
    expect(result.success).toBe(false)
    const paths = result.error!.issues.map((i) => i.path.join('.'))
    expect(paths).toEqual(expect.arrayContaining(['mode', 'workspaceRoot', 'writableRoots.1', 'network', '']))
  })

  it('SandboxPolicy narrows the mode to a confined one', () => {
    expect(SandboxPolicySchema.safeParse({ mode: 'read-only', workspaceRoot: '/' }).success).toBe(true)
    expect(SandboxPolicySchema.safeParse({ mode: 'danger-full-access', workspaceRoot: '/' }).success).toBe(false)
  })

  it('requires roots to be lexically normal absolute paths', () => {
    expect(isNormalAbsolutePath('/')).toBe(true)
    expect(isNormalAbsolutePath('/a/b')).toBe(true)
    for (const bad of ['a', '/a/', '/a/../b', '/a/./b', '//a', '/a//b', '/a\0b'])
      expect(isNormalAbsolutePath(bad)).toBe(false)
  })

  it('exports a JSON Schema of the policy', () => {
    const schema = SANDBOX_EXECUTION_POLICY_JSON_SCHEMA as {
      type: string
      required: string[]
      additionalProperties: boolean
      properties: Record<
        string,
        { enum?: string[]; const?: string; type?: string; anyOf?: Array<{ enum?: string[]; properties?: object }> }
      >
    }
    expect(schema.type).toBe('object')
    expect(schema.required).toEqual(['mode', 'workspaceRoot'])
    expect(schema.additionalProperties).toBe(false)
    expect(schema.properties.mode!.enum).toEqual([...SANDBOX_MODES])
    expect(schema.properties.network!.anyOf?.[0]?.enum).toEqual(['inherit', 'deny'])
    expect(Object.keys(schema.properties.network!.anyOf?.[1]?.properties ?? {})).toEqual(['allow', 'deny'])
    expect(Object.keys(schema.properties).sort()).toEqual(
      [
        'allowUnixSockets',
        'hiddenDefaults',
        'hiddenPaths',
        'protectedDefaults',
        'cacheRoots',
        'sharedMemory',
        'runAsOwner',
        'limits',
        'mode',
        'network',
        'protectedPaths',
        'unprotectedPaths',
        'requireEnforcement',
        'sessionId',
        'workspaceRoot',
        'writableRoots',
      ].sort(),
    )
    expect(() => JSON.stringify(schema)).not.toThrow()
  })
})
