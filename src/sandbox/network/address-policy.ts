/**
 * The proxy's second check, after the allow-list has passed a name: the addresses that name
 * resolves to. A listed public name must not lead into this host, its networks or the cloud's
 * metadata service (a DNS answer is the name owner's to choose), so such addresses are refused
 * by range, unless the allow-list names that address literally.
 */
import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { type CompiledAllowList, namesAddressLiterally } from '../../policy/network/allow-list.js'
import { canonicalAddress } from '../../policy/network/host-pattern.js'

type Family = 'ipv4' | 'ipv6'

/** One class of refused addresses: what it is called and its ranges. */
interface RangeClass {
  name: string
  ranges: ReadonlyArray<readonly [string, number, Family]>
}

// Order matters only for the reason given: the first class that holds an address names it.
// The documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24) are deliberately absent:
// real resolvers on some hosts answer with them (this machine's npm registry is 203.0.113.80).
const CLASSES: readonly RangeClass[] = [
  {
    name: 'a loopback address',
    ranges: [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  },
  {
    name: 'an unspecified address',
    ranges: [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  },
  {
    name: 'a link-local address (cloud metadata lives there)',
    ranges: [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  },
  {
    name: 'a private-network address',
    ranges: [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
      ['fec0::', 10, 'ipv6'],
    ],
  },
  {
    name: 'a multicast address',
    ranges: [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  },
  // 240/4 holds the broadcast address 255.255.255.255; ::/96 is the deprecated IPv4-compatible block.
  {
    name: 'a reserved or broadcast address',
    ranges: [
      ['240.0.0.0', 4, 'ipv4'],
      ['::', 96, 'ipv6'],
    ],
  },
]

const BLOCKS = CLASSES.map((c) => {
  const list = new BlockList()
  for (const [net, prefix, family] of c.ranges) list.addSubnet(net, prefix, family)
  return { name: c.name, list }
})

/** The 16 bytes of an IPv6 address (node-valid text, no zone), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  let text = address
  const tail: number[] = []
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    tail.push(...dotted[1]!.split('.').map(Number))
    // Stand the dotted quad in as two hextets so the rest parses uniformly.
    text = `${text.slice(0, dotted.index)}0:0`
  }
  const [head, rest] = text.split('::') as [string, string | undefined]
  const groups = (part: string | undefined) => (part ? part.split(':') : [])
  const left = groups(head)
  const right = groups(rest)
  const fill = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0')
  const all = [...left, ...fill, ...right]
  if (all.length !== 8) return undefined
  const bytes = all.flatMap((g) => {
    const n = Number.parseInt(g, 16)
    return [n >> 8, n & 0xff]
  })
  if (tail.length === 4) bytes.splice(12, 4, ...tail)
  return bytes
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
export function embeddedIpv4(address: string): string | undefined {
  const b = ipv6Bytes(address)
  if (!b) return undefined
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  const quad = (at: number) => b.slice(at, at + 4).join('.')
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return quad(12)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return quad(12)
  if (b[0] === 0x20 && b[1] === 0x02) return quad(2)
  return undefined
}

/** Every address of this host's interfaces, canonical (read each time: interfaces come and go). */
function hostAddresses(): Set<string> {
  const out = new Set<string>()
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) out.add(canonicalAddress(entry.address.replace(/%.*$/, '')))
  }
  return out
}

/** The class `address` (an IPv4 or IPv6 literal) falls in, judged alone. */
function rangeOf(address: string): string | undefined {
  const family: Family = isIP(address) === 4 ? 'ipv4' : 'ipv6'
  if (family === 'ipv6') {
    const v4 = embeddedIpv4(address)
    if (v4 !== undefined) {
      const inner = rangeOf(v4)
      return inner === undefined ? undefined : `${inner} (inside ${address})`
    }
  }
  const hit = BLOCKS.find((b) => b.list.check(address, family))
  if (hit) return hit.name
  if (hostAddresses().has(canonicalAddress(address))) return "one of this host's own addresses"
  return undefined
}

/** Why the proxy must not connect to `address` at `port` under `list` (a reason phrase), or undefined when it may. Not an IP literal: refused. */
export function refusedAddress(address: string, list: CompiledAllowList, port: number): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1')
  if (isIP(bare) === 0) return `${address} is not an IP address`
  // A zone picks an interface of this host: nothing a sandbox should choose.
  if (bare.includes('%')) return `${bare} is a scoped (interface-bound) address`
  if (namesAddressLiterally(list, bare, port)) return undefined
  const range = rangeOf(bare)
  return range === undefined ? undefined : `${bare} is ${range}`
}
