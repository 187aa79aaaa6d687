import { networkInterfaces } from 'node:os'
import { describe, expect, it } from 'vitest'
import { compileAllowList } from '../../../../src/policy/network/allow-list.js'
import { embeddedIpv4, refusedAddress } from '../../../../src/sandbox/network/address-policy.js'

const none = compileAllowList({ allow: ['example.com'] })

describe('refusedAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['fc00::1', 'private'],
    ['fdff::1', 'private'],
    ['fec0::1', 'private'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:0101::1', 'private'],
    ['[::1]', 'loopback'],
    ['::7f00:1', 'reserved'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(refusedAddress(address, none, 443)).toContain(kind)
  })

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.80',
    '2606:4700::6810:84e5',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    'fe00::1',
  ])('lets %s through', (address) => {
    expect(refusedAddress(address, none, 443)).toBeUndefined()
  })

  it("refuses this host's own interface addresses", () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .map((entry) => entry?.address)
      .filter((a): a is string => a !== undefined && !a.includes('%'))
    expect(own.length).toBeGreaterThan(0)
    for (const address of own) expect(refusedAddress(address, none, 443)).toBeDefined()
  })

  it('lets an address the allow-list names literally through, at its port only', () => {
    const list = compileAllowList({ allow: ['127.0.0.1:8080', '10.1.2.3', '[::1]:443'] })
    expect(refusedAddress('127.0.0.1', list, 8080)).toBeUndefined()
    expect(refusedAddress('127.0.0.1', list, 8081)).toContain('loopback')
    expect(refusedAddress('10.1.2.3', list, 1)).toBeUndefined()
    expect(refusedAddress('10.1.2.4', list, 1)).toContain('private')
    expect(refusedAddress('0:0:0:0:0:0:0:1', list, 443)).toBeUndefined()
    // A name in the list is no literal: the address it led to is judged by range.
    expect(refusedAddress('127.0.0.1', compileAllowList({ allow: ['localhost'] }), 80)).toContain('loopback')
  })

  it('refuses a scoped address, even one the list could never name', () => {
    expect(refusedAddress('2001:db8::1%eth0', none, 80)).toContain('scoped')
  })

  it('refuses what is not an address at all', () => {
    expect(refusedAddress('example.com', none, 80)).toContain('not an IP address')
  })
})

describe('embeddedIpv4', () => {
  it('reads the IPv4 inside mapped, NAT64 and 6to4 addresses only', () => {
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1')
    expect(embeddedIpv4('::ffff:1.2.3.4')).toBe('1.2.3.4')
    expect(embeddedIpv4('64:ff9b::1.2.3.4')).toBe('1.2.3.4')
    expect(embeddedIpv4('2002:102:304::')).toBe('1.2.3.4')
    expect(embeddedIpv4('2001:db8::1')).toBeUndefined()
    expect(embeddedIpv4('64:ff9b:1::1.2.3.4')).toBeUndefined()
    expect(embeddedIpv4('::1')).toBeUndefined()
  })
})
