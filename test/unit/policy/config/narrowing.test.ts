// Each narrowing rule both ways: a narrower (or equal) setting has no widening, a wider one is named
// with what it was and what it is. Modes by the ladder; writable roots a subset (symlinks resolved,
// the workspace root counting as writable); hidden and protected paths never dropped; network
// deny < allow-list < inherit, allow patterns covered, deny patterns kept; limits kept and lowered.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { absoluteIn, wideningsOf } from '../../../../src/policy/config/narrowing.js'
import { type ConfigSettings, DEFAULT_CONFIG_SETTINGS } from '../../../../src/policy/config/settings.js'
import { scratchDir } from '../../../support/scratch.js'

const base = scratchDir('cordon-narrowing')
const root = path.join(base, 'ws')
const data = path.join(base, 'data')
for (const d of [root, data, path.join(data, 'sub'), path.join(root, 'build')]) fs.mkdirSync(d, { recursive: true })
fs.symlinkSync('/etc', path.join(data, 'etc-link'))

const settings = (s: Partial<ConfigSettings>): ConfigSettings => ({ ...DEFAULT_CONFIG_SETTINGS, ...s })
const fields = (was: Partial<ConfigSettings>, is: Partial<ConfigSettings>) =>
  wideningsOf(settings(was), settings(is), root).map((w) => w.field)

describe('wideningsOf', () => {
  it('mode: lower or equal narrows; higher widens, named with was and is', () => {
    expect(fields({ mode: 'workspace-write' }, { mode: 'read-only' })).toEqual([])
    expect(fields({ mode: 'workspace-write' }, { mode: 'workspace-write' })).toEqual([])
    expect(wideningsOf(settings({}), settings({ mode: 'danger-full-access' }), root)).toEqual([
      { field: 'mode', was: '"read-only"', is: '"danger-full-access"' },
    ])
  })

  it('writable roots: a subset, or beneath one, or inside the workspace root narrows; anything else widens', () => {
    expect(fields({ writableRoots: [data] }, { writableRoots: [] })).toEqual([])
    expect(fields({ writableRoots: [data] }, { writableRoots: [path.join(data, 'sub')] })).toEqual([])
    expect(fields({}, { writableRoots: ['build', path.join(root, 'build')] })).toEqual([])
    expect(fields({}, { writableRoots: [data] })).toEqual(['writableRoots'])
    expect(fields({ writableRoots: [path.join(data, 'sub')] }, { writableRoots: [data] })).toEqual(['writableRoots'])
    // A link beneath a writable root that leads out of it is compared where it leads.
    expect(fields({ writableRoots: [data] }, { writableRoots: [path.join(data, 'etc-link')] })).toEqual([
      'writableRoots',
    ])
    expect(fields({}, { writableRoots: ['../data'] })).toEqual(['writableRoots'])
  })

  it('hidden and protected paths: keeping every one (relative or absolute alike) narrows; dropping one widens', () => {
    expect(fields({ hiddenPaths: ['.env'] }, { hiddenPaths: [path.join(root, '.env'), '/x'] })).toEqual([])
    expect(fields({ hiddenPaths: ['.env', '/x'] }, { hiddenPaths: ['/x'] })).toEqual(['hiddenPaths'])
    expect(fields({ protectedPaths: ['ci'] }, { protectedPaths: ['ci', 'deploy'] })).toEqual([])
    const [w] = wideningsOf(settings({ protectedPaths: ['ci'] }), settings({}), root)
    expect(w).toEqual({ field: 'protectedPaths', was: '["ci"]', is: '[] (["ci"] dropped)' })
  })

  it('network: deny < allow-list < inherit', () => {
    const list = { allow: ['a.example'] }
    expect(fields({ network: 'inherit' }, { network: list })).toEqual([])
    expect(fields({ network: 'inherit' }, { network: 'deny' })).toEqual([])
    expect(fields({ network: list }, { network: 'deny' })).toEqual([])
    expect(fields({ network: 'deny' }, { network: list })).toEqual(['network'])
    expect(fields({ network: list }, { network: 'inherit' })).toEqual(['network'])
    expect(fields({ network: 'deny' }, { network: 'inherit' })).toEqual(['network'])
  })

  it('between allow-lists: every allowed pattern covered by a broader one, every deny pattern kept', () => {
    const wide = { allow: ['*.example.com', 'registry.npmjs.org:443'], deny: ['evil.example.com'] }
    const narrow = { allow: ['api.example.com', 'registry.npmjs.org:443'], deny: ['evil.example.com', 'x.example.com'] }
    expect(fields({ network: wide }, { network: narrow })).toEqual([])
    expect(fields({ network: narrow }, { network: wide })).toEqual(['network.allow', 'network.deny'])
    expect(
      fields({ network: { allow: ['registry.npmjs.org'] } }, { network: { allow: ['registry.npmjs.org:443'] } }),
    ).toEqual([])
    expect(fields({ network: { allow: ['a.example:443'] } }, { network: { allow: ['a.example'] } })).toEqual([
      'network.allow',
    ])
    const dropped = wideningsOf(
      settings({ network: { allow: ['*.example.com'], deny: ['evil.example.com'] } }),
      settings({ network: { allow: ['api.example.com'] } }),
      root,
    )
    expect(dropped).toEqual([
      { field: 'network.deny', was: '["evil.example.com"]', is: '[] (["evil.example.com"] no longer denied)' },
    ])
    // A wildcard deny covers a name it denies: the deny list grew.
    expect(
      fields(
        { network: { allow: ['*.e.com'], deny: ['x.e.com'] } },
        { network: { allow: ['*.e.com'], deny: ['*.e.com'] } },
      ),
    ).toEqual([])
  })

  it('limits: a limit may be set anew or lowered; raised or dropped widens', () => {
    expect(fields({}, { limits: { processes: 10 } })).toEqual([])
    expect(fields({ limits: { processes: 10 } }, { limits: { processes: 5 } })).toEqual([])
    expect(fields({ limits: { processes: 10 } }, { limits: { processes: 11 } })).toEqual(['limits.processes'])
    expect(wideningsOf(settings({ limits: { fileSizeBytes: 1 } }), settings({}), root)).toEqual([
      { field: 'limits.fileSizeBytes', was: '1', is: 'no limit' },
    ])
  })

  it('names every widening field at once', () => {
    expect(
      fields(
        { mode: 'read-only', network: 'deny', limits: { processes: 1 }, hiddenPaths: ['/h'] },
        { mode: 'workspace-write', network: 'inherit', limits: {}, hiddenPaths: [] },
      ),
    ).toEqual(['mode', 'hiddenPaths', 'network', 'limits.processes'])
  })

  it('absoluteIn: relative paths against the root; without one they stay as written', () => {
    expect(absoluteIn('/w', 'a/b')).toBe('/w/a/b')
    expect(absoluteIn('/w', '/x')).toBe('/x')
    expect(absoluteIn(undefined, 'a')).toBe('a')
  })
})
