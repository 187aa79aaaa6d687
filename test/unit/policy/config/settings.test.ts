// A file's content as settings ($schema dropped), the shape check the tools use on a config
// option, and how a source reads in `cordon explain`.
import { describe, expect, it } from 'vitest'
import { layerConfig } from '../../../../src/policy/config/layers.js'
import {
  CONFIG_SOURCE_KINDS,
  DEFAULT_CONFIG_SETTINGS,
  describeSource,
  isResolvedConfig,
  settingsOfContent,
} from '../../../../src/policy/config/settings.js'

describe('settings', () => {
  it('settingsOfContent keeps every setting a file gives and drops $schema', () => {
    expect(settingsOfContent({ $schema: 'x', mode: 'read-only', limits: { processes: 1 } })).toEqual({
      mode: 'read-only',
      limits: { processes: 1 },
    })
    expect(settingsOfContent({})).toEqual({})
  })

  it('the defaults are read-only, the host network, nothing extra, no limits; frozen', () => {
    expect(DEFAULT_CONFIG_SETTINGS).toEqual({
      mode: 'read-only',
      writableRoots: [],
      hiddenPaths: [],
      protectedPaths: [],
      network: 'inherit',
      limits: {},
    })
    expect(Object.isFrozen(DEFAULT_CONFIG_SETTINGS)).toBe(true)
    expect(CONFIG_SOURCE_KINDS).toEqual(['default', 'user', 'project', 'file', 'flags', 'api'])
  })

  it('isResolvedConfig: a layered config yes; settings alone, or anything else, no', () => {
    expect(isResolvedConfig(layerConfig([], undefined))).toBe(true)
    expect(isResolvedConfig({ ...DEFAULT_CONFIG_SETTINGS })).toBe(false)
    expect(isResolvedConfig({ ...layerConfig([], undefined), mode: 'yolo' })).toBe(false)
    for (const v of [null, 1, 'read-only', []]) expect(isResolvedConfig(v)).toBe(false)
  })

  it('describeSource: the file, the command line, the caller, or the kind', () => {
    expect(describeSource({ kind: 'user', file: '/h/c.json' })).toBe('/h/c.json')
    expect(describeSource({ kind: 'flags' })).toBe('the command line')
    expect(describeSource({ kind: 'api' })).toBe('the caller')
    expect(describeSource({ kind: 'default' })).toBe('default')
  })
})
