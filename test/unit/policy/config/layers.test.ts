// Layering with provenance: each layer overrides what it gives (mode, roots, network, each limit)
// and adds its hidden and protected paths; every setting knows its source; a project layer that
// would widen the layers before it is refused naming the file and each field, never clipped.
import { describe, expect, it } from 'vitest'
import { applyLayer, layerConfig } from '../../../../src/policy/config/layers.js'
import { type ConfigLayer, DEFAULT_CONFIG_SETTINGS } from '../../../../src/policy/config/settings.js'
import { type ConfigWidenedError, isConfigWidenedError } from '../../../../src/policy/errors.js'

const user: ConfigLayer['source'] = { kind: 'user', file: '/h/.config/cordon/config.json' }
const project: ConfigLayer['source'] = { kind: 'project', file: '/w/.cordon.json' }
const file: ConfigLayer['source'] = { kind: 'file', file: '/etc/ci.json' }
const flags: ConfigLayer['source'] = { kind: 'flags' }

describe('applyLayer', () => {
  it('overrides mode, roots, network and each limit; adds hidden and protected paths', () => {
    const base = applyLayer(DEFAULT_CONFIG_SETTINGS, {
      mode: 'workspace-write',
      writableRoots: ['/a'],
      hiddenPaths: ['/h1'],
      protectedPaths: ['p1'],
      network: 'deny',
      limits: { processes: 5, fileSizeBytes: 9 },
    })
    expect(
      applyLayer(base, {
        writableRoots: ['/b'],
        hiddenPaths: ['/h2', '/h1'],
        protectedPaths: ['p2'],
        limits: { processes: 3 },
      }),
    ).toEqual({
      mode: 'workspace-write',
      writableRoots: ['/b'],
      hiddenPaths: ['/h1', '/h2'],
      protectedPaths: ['p1', 'p2'],
      network: 'deny',
      limits: { processes: 3, fileSizeBytes: 9 },
    })
    expect(applyLayer(base, {})).toEqual(base)
  })
})

describe('layerConfig', () => {
  it('no layer: the defaults, each from `default`, no files', () => {
    const c = layerConfig([], undefined)
    expect(c).toMatchObject({ ...DEFAULT_CONFIG_SETTINGS, workspaceRoot: undefined, files: [] })
    expect(c.sources).toEqual({
      mode: { kind: 'default' },
      writableRoots: { kind: 'default' },
      network: { kind: 'default' },
      hiddenPaths: [],
      protectedPaths: [],
      limits: {},
    })
    expect(Object.isFrozen(c)).toBe(true)
  })

  it('each setting remembers the layer that gave it; each path the first layer that added it', () => {
    const c = layerConfig(
      [
        { source: user, settings: { mode: 'workspace-write', hiddenPaths: ['/h'], limits: { processes: 9 } } },
        { source: project, settings: { network: 'deny', hiddenPaths: ['/h', '.env'], limits: { processes: 4 } } },
        { source: file, settings: { protectedPaths: ['ci'], limits: { fileSizeBytes: 1 } } },
        { source: flags, settings: { mode: 'read-only' } },
      ],
      '/w',
    )
    expect(c.mode).toBe('read-only')
    expect(c.sources.mode).toEqual(flags)
    expect(c.sources.network).toEqual(project)
    expect(c.sources.writableRoots).toEqual({ kind: 'default' })
    expect(c.hiddenPaths).toEqual(['/h', '.env'])
    expect(c.sources.hiddenPaths).toEqual([user, project])
    expect(c.sources.protectedPaths).toEqual([file])
    expect(c.sources.limits).toEqual({ processes: project, fileSizeBytes: file })
    expect(c.files).toEqual([
      { kind: 'user', path: user.file },
      { kind: 'project', path: project.file },
      { kind: 'file', path: file.file },
    ])
  })

  it('refuses a project layer wider than the layers before it, naming the file and every field', () => {
    try {
      layerConfig(
        [
          { source: user, settings: { mode: 'workspace-write', network: 'deny' } },
          { source: project, settings: { mode: 'danger-full-access', network: 'inherit' } },
        ],
        '/w',
      )
      expect.unreachable()
    } catch (error) {
      expect(isConfigWidenedError(error)).toBe(true)
      const e = error as ConfigWidenedError
      expect(e).toMatchObject({ code: 'CONFIG_WIDENED', file: '/w/.cordon.json', against: 'layers' })
      expect(e.widenings.map((w) => w.field)).toEqual(['mode', 'network'])
      expect(e.message).toContain('mode: at most "workspace-write", is "danger-full-access"')
      expect(e.message).toMatch(/may only narrow/)
    }
  })

  it('the person’s own layers (file, flags, api) widen freely over a project layer', () => {
    const c = layerConfig(
      [
        { source: project, settings: { network: 'deny' } },
        { source: file, settings: { network: 'inherit', mode: 'danger-full-access' } },
      ],
      '/w',
    )
    expect(c).toMatchObject({ network: 'inherit', mode: 'danger-full-access' })
  })
})
