import { describe, expect, it } from 'vitest'
import {
  canonicalAddress,
  normalizeHost,
  parseHostPattern,
  patternMatches,
  type HostPattern,
} from '../../../../src/policy/network/host-pattern.js'

function parsed(text: string): HostPattern {
  const result = parseHostPattern(text)
  if ('error' in result) throw new Error(result.error)
  return result
}

describe('parseHostPattern', () => {
  it('reads names, wildcards and addresses, with and without ports', () => {
    expect(parsed('Registry.NPMjs.org.')).toMatchObject({ host: 'registry.npmjs.org', kind: 'name', port: undefined })
    expect(parsed('*.example.com:443')).toMatchObject({ host: 'example.com', kind: 'wildcard', port: 443 })
    expect(parsed('10.0.0.1:8080')).toMatchObject({ host: '10.0.0.1', kind: 'address', port: 8080 })
    expect(parsed('[2001:DB8::0:1]:443')).toMatchObject({ host: '2001:db8::1', kind: 'address', port: 443 })
    expect(parsed('::1')).toMatchObject({ host: '::1', kind: 'address', port: undefined })
  })

  it.each([
    ['*', 'inherit'],
    ['', 'inherit'],
    ['a.*.com', 'wildcard'],
    ['*example.com', 'wildcard'],
    ['host:0', 'port'],
    ['host:65536', 'port'],
    ['host:http', 'port'],
    ['[::1', 'brackets'],
    ['[::1]x', 'brackets'],
    ['-bad.com', 'host name'],
    ['under score.com', 'host name'],
    ['1.2.3', 'host name'],
    ['*.123', 'host name'],
    ['fe80::1%eth0', 'scoped'],
  ])('refuses %j (%s)', (text, word) => {
    const result = parseHostPattern(text)
    expect('error' in result && result.error).toContain(word)
  })
})

describe('patternMatches', () => {
  it('matches a name exactly and a wildcard on subdomains only', () => {
    expect(patternMatches(parsed('example.com'), 'example.com', 80)).toBe(true)
    expect(patternMatches(parsed('example.com'), 'www.example.com', 80)).toBe(false)
    expect(patternMatches(parsed('*.example.com'), 'a.b.example.com', 80)).toBe(true)
    expect(patternMatches(parsed('*.example.com'), 'example.com', 80)).toBe(false)
    expect(patternMatches(parsed('*.example.com'), 'badexample.com', 80)).toBe(false)
  })

  it('honours the port when one is given', () => {
    expect(patternMatches(parsed('example.com:443'), 'example.com', 443)).toBe(true)
    expect(patternMatches(parsed('example.com:443'), 'example.com', 80)).toBe(false)
    expect(patternMatches(parsed('example.com'), 'example.com', 1)).toBe(true)
  })
})

describe('normalizeHost and canonicalAddress', () => {
  it('lower-cases, drops a trailing dot and brackets, and compresses IPv6', () => {
    expect(normalizeHost(' Example.COM. ')).toBe('example.com')
    expect(normalizeHost('[0:0:0:0:0:0:0:1]')).toBe('::1')
    expect(canonicalAddress('2001:0DB8:0000::0001')).toBe('2001:db8::1')
    expect(canonicalAddress('10.0.0.1')).toBe('10.0.0.1')
    // A scoped address the URL parser rejects keeps its text instead of throwing.
    expect(normalizeHost('FE80::1%eth0')).toBe('fe80::1%eth0')
  })
})
