import { describe, expect, it } from 'vitest'
import { compileAllowList, namesAddressLiterally, refusalOf } from '../../../../src/policy/network/allow-list.js'

describe('refusalOf', () => {
  const list = compileAllowList({
    allow: ['registry.npmjs.org', '*.github.com:443', '10.0.0.5', 'bad pattern!'],
    deny: ['evil.github.com'],
  })

  it('allows what allow names, in any case and with a trailing dot', () => {
    expect(refusalOf(list, 'registry.npmjs.org', 443)).toBeUndefined()
    expect(refusalOf(list, 'REGISTRY.npmjs.org.', 80)).toBeUndefined()
    expect(refusalOf(list, 'api.github.com', 443)).toBeUndefined()
    expect(refusalOf(list, '10.0.0.5', 22)).toBeUndefined()
  })

  it('lets deny win over allow', () => {
    expect(refusalOf(list, 'evil.github.com', 443)).toBe('denied')
    expect(refusalOf(list, 'Evil.GitHub.com.', 443)).toBe('denied')
  })

  it('refuses what allow does not name, other ports, and the wildcard base', () => {
    expect(refusalOf(list, 'npmjs.org', 443)).toBe('not-allowed')
    expect(refusalOf(list, 'api.github.com', 80)).toBe('not-allowed')
    expect(refusalOf(list, 'github.com', 443)).toBe('not-allowed')
    expect(refusalOf(list, '10.0.0.6', 22)).toBe('not-allowed')
  })

  it('ignores a pattern that does not parse (it allows nothing)', () => {
    expect(list.allow.map((p) => p.source)).not.toContain('bad pattern!')
  })

  it('refuses everything under an empty allow', () => {
    expect(refusalOf(compileAllowList({ allow: [] }), 'example.com', 80)).toBe('not-allowed')
  })
})

describe('namesAddressLiterally', () => {
  it('holds for address patterns only, in canonical form, at their port', () => {
    const list = compileAllowList({ allow: ['127.0.0.1:8080', '[::1]', 'localhost'] })
    expect(namesAddressLiterally(list, '127.0.0.1', 8080)).toBe(true)
    expect(namesAddressLiterally(list, '127.0.0.1', 80)).toBe(false)
    expect(namesAddressLiterally(list, '0:0::1', 5)).toBe(true)
    expect(namesAddressLiterally(list, 'localhost', 80)).toBe(false)
  })
})
