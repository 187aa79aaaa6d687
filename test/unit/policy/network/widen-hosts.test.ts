// additional_hosts as the policy reads it: each pattern checked (every bad one named), the normal
// form the approval digest covers (sorted, each once), the widened network (deny → a list; a list
// → more allow patterns, its deny kept), and the refusals: inherit widens nothing, a host already
// covered widens nothing, a host a deny pattern covers stays refused.
import { describe, expect, it } from 'vitest'
import { holdsRawControl } from '../../../../src/policy/display-text.js'
import { parseHostPattern, type HostPattern } from '../../../../src/policy/network/host-pattern.js'
import {
  coversPattern,
  HOST_WIDENING_TEXTS,
  hostsRequestLabel,
  normalPattern,
  parseAdditionalHosts,
  refusedBefore,
  widenNetwork,
} from '../../../../src/policy/network/widen-hosts.js'

const pattern = (text: string) => parseHostPattern(text) as HostPattern

describe('parseAdditionalHosts', () => {
  it('normalizes (case, trailing dot, canonical address), sorts and keeps each once', () => {
    expect(
      parseAdditionalHosts(['B.example.', 'a.example', 'b.example', '*.NPMjs.org:443', '[::0001]:8080', '::1']),
    ).toEqual({ ok: true, hosts: ['*.npmjs.org:443', '::1', '[::1]:8080', 'a.example', 'b.example'] })
    expect(normalPattern(pattern('10.0.0.1:80'))).toBe('10.0.0.1:80')
  })

  it('names every bad pattern, escaped, with why; an empty list is refused too', () => {
    const check = parseAdditionalHosts(['ok.example', 'a b', '*', 'x:0', 'e\x1b[2Jvil'])
    expect(check.ok).toBe(false)
    const error = (check as { error: string }).error
    expect(error).toMatch(/^invalid additional_hosts, nothing ran: "a b": .*; "\*": .*; "x:0": the port must be/)
    expect(error).toContain('"e\\\\x1b[2Jvil": ')
    expect(holdsRawControl(error)).toBe(false)
    expect(parseAdditionalHosts([])).toEqual({ ok: false, error: HOST_WIDENING_TEXTS.empty })
  })
})

describe('coversPattern', () => {
  it('a wildcard covers its subdomains (not the bare name); a portless pattern covers every port', () => {
    expect(coversPattern(pattern('*.example.com'), pattern('a.example.com:443'))).toBe(true)
    expect(coversPattern(pattern('*.example.com'), pattern('*.a.example.com'))).toBe(true)
    expect(coversPattern(pattern('*.example.com'), pattern('example.com'))).toBe(false)
    expect(coversPattern(pattern('a.example.com'), pattern('a.example.com:8443'))).toBe(true)
    expect(coversPattern(pattern('a.example.com:443'), pattern('a.example.com'))).toBe(false)
    expect(coversPattern(pattern('a.example.com'), pattern('*.a.example.com'))).toBe(false)
  })
})

describe('widenNetwork', () => {
  it('inherit (or no network) has nothing to widen', () => {
    for (const current of [undefined, 'inherit' as const]) {
      expect(widenNetwork(current, ['a.example'])).toEqual({
        ok: false,
        why: 'not-restricted',
        error: HOST_WIDENING_TEXTS.notRestricted,
      })
    }
  })

  it('under danger-full-access no network policy applies: nothing to widen, whatever the list', () => {
    expect(widenNetwork({ allow: ['a.example'] }, ['b.example'], 'danger-full-access')).toEqual({
      ok: false,
      why: 'not-restricted',
      error: HOST_WIDENING_TEXTS.unconfined,
    })
    expect(widenNetwork('deny', ['b.example'], 'workspace-write')).toMatchObject({ ok: true })
  })

  it('deny reaches nothing, so any list is wider', () => {
    expect(widenNetwork('deny', ['a.example', 'b.example'])).toEqual({
      ok: true,
      network: { allow: ['a.example', 'b.example'] },
      added: ['a.example', 'b.example'],
    })
  })

  it('a list gains the hosts it does not cover yet, and keeps its deny patterns', () => {
    const list = { allow: ['*.npmjs.org', 'github.com:443'], deny: ['secret.npmjs.org'] }
    expect(widenNetwork(list, ['github.com', 'pypi.org', 'registry.npmjs.org'])).toEqual({
      ok: true,
      network: { allow: ['*.npmjs.org', 'github.com:443', 'github.com', 'pypi.org'], deny: ['secret.npmjs.org'] },
      added: ['github.com', 'pypi.org'],
    })
    expect(widenNetwork({ allow: ['a.example'] }, ['b.example'])).toEqual({
      ok: true,
      network: { allow: ['a.example', 'b.example'] },
      added: ['b.example'],
    })
  })

  it('hosts the list covers already widen nothing', () => {
    const widened = widenNetwork({ allow: ['*.npmjs.org', 'a.example'] }, ['a.example:443', 'registry.npmjs.org'])
    expect(widened).toMatchObject({ ok: false, why: 'not-wider' })
    expect((widened as { error: string }).error).toBe(
      "additional_hosts: a.example:443, registry.npmjs.org already allowed by this call's allow-list: the request widens nothing",
    )
  })

  it('deny wins: a host a deny pattern covers is refused, naming the pattern; nothing is widened', () => {
    const list = { allow: ['*.example.com'], deny: ['*.internal.example.com', 'admin.example.com:443'] }
    const widened = widenNetwork(list, ['db.internal.example.com', 'admin.example.com:443', 'ok.example.org'])
    expect(widened).toMatchObject({ ok: false, why: 'denied' })
    expect((widened as { error: string }).error).toBe(
      'additional_hosts: db.internal.example.com is covered by the deny pattern *.internal.example.com; admin.example.com:443 is covered by the deny pattern admin.example.com:443: a deny pattern wins over every allow pattern and no approval lifts it; nothing ran',
    )
    // A deny pattern on one port does not cover the host's other ports: those can be asked for.
    const onePort = { allow: ['a.example'], deny: ['admin.example.com:443'] }
    expect(widenNetwork(onePort, ['admin.example.com'])).toMatchObject({ ok: true, added: ['admin.example.com'] })
  })
})

describe('refusedBefore and the request label', () => {
  const refused = [
    { host: 'Registry.NPMjs.org', port: 443, count: 2, reason: 'not-allowed' as const },
    { host: '::1', port: 8080, count: 1, reason: 'address' as const },
  ]
  it('a host covers a refused destination by name, wildcard, port or address', () => {
    expect(refusedBefore('registry.npmjs.org', refused)).toBe(true)
    expect(refusedBefore('*.npmjs.org:443', refused)).toBe(true)
    expect(refusedBefore('registry.npmjs.org:80', refused)).toBe(false)
    expect(refusedBefore('[::1]:8080', refused)).toBe(true)
    expect(refusedBefore('pypi.org', refused)).toBe(false)
    expect(refusedBefore('not a host', refused)).toBe(false)
  })

  it('the label names the mode and each host, escaped', () => {
    expect(hostsRequestLabel('read-only', ['a.example', 'b\x1b.example'])).toBe(
      'read-only with the hosts a.example, b\\x1b.example',
    )
  })
})
