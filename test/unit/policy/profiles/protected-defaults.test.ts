// The default protected table (profiles/protected.json) made absolute for writable roots and a
// home: relative entries in every root, `~/` ones under the home, opted out by path.
import { describe, expect, it } from 'vitest'
import {
  isUnprotected,
  PROTECTED_DEFAULTS,
  protectedDefaultPlaces,
  unprotectedOf,
} from '../../../../src/policy/profiles/protected-defaults.js'

const names = (places: Array<{ path: string }>) => places.map((p) => p.path)

describe('protectedDefaultPlaces', () => {
  it('names the editor, agent and shell files the issue lists, and not .gitmodules', () => {
    const paths = PROTECTED_DEFAULTS.map((e) => e.path)
    for (const p of [
      '.vscode/tasks.json',
      '.vscode/settings.json',
      '.idea',
      '.mcp.json',
      '.claude/settings.json',
      '.claude/settings.local.json',
      '.claude/commands',
      '.envrc',
      '.husky',
      '~/.bashrc',
      '~/.bash_profile',
      '~/.profile',
      '~/.zshrc',
      '~/.zprofile',
      '~/.bash_login',
      '~/.bash_logout',
      '~/.gitconfig',
    ])
      expect(paths).toContain(p)
    expect(paths).not.toContain('.gitmodules')
  })

  it('puts relative entries in every root and ~ entries under the home', () => {
    const all = names(protectedDefaultPlaces({}, ['/w/a', '/w/b'], [], '/home/u'))
    expect(all).toContain('/w/a/.vscode/tasks.json')
    expect(all).toContain('/w/b/.vscode/tasks.json')
    expect(all).toContain('/home/u/.bashrc')
    expect(all).not.toContain('/w/a/.bashrc')
    // A home that is not absolute names no ~ entry.
    expect(names(protectedDefaultPlaces({}, ['/w/a'], [], 'relative')).some((p) => p.endsWith('.bashrc'))).toBe(false)
  })

  it('leaves out what unprotected covers, and everything with protectedDefaults: false', () => {
    const kept = names(protectedDefaultPlaces({}, ['/w/a'], ['/w/a/.vscode', '/home/u/.gitconfig'], '/home/u'))
    expect(kept.some((p) => p.startsWith('/w/a/.vscode/'))).toBe(false)
    expect(kept).not.toContain('/home/u/.gitconfig')
    expect(kept).toContain('/home/u/.bashrc')
    expect(protectedDefaultPlaces({ protectedDefaults: false }, ['/w/a'], [], '/home/u')).toEqual([])
  })

  it('makes relative opt-outs absolute against the workspace root; matches by path, not prefix', () => {
    expect(unprotectedOf({ workspaceRoot: '/w', unprotectedPaths: ['.envrc', '/x/y'] })).toEqual(['/w/.envrc', '/x/y'])
    expect(isUnprotected('/w/.envrc', ['/w/.envrc'])).toBe(true)
    expect(isUnprotected('/w/.envrc.d', ['/w/.envrc'])).toBe(false)
    expect(isUnprotected('/w/.idea/x', ['/w/.idea'])).toBe(true)
  })
})
