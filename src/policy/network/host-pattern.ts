/**
 * The host patterns of a network allow-list (`network: { allow, deny }`): a host name, a `*.`
 * wildcard over its subdomains, or an IP address, each with an optional `:port` (IPv6 in
 * brackets when it has one). Names compare without case and without a trailing dot; addresses
 * compare in canonical form. Pure: the proxy (src/sandbox/network/proxy.ts) and the policy's
 * validation read the same parse.
 */
import { isIP } from 'node:net'

/** One parsed pattern. `port` undefined: every port. */
export interface HostPattern {
  /** The text as given. */
  source: string
  /** Lower-case name without a trailing dot (after `*.` for a wildcard), or a canonical address. */
  host: string
  kind: 'name' | 'wildcard' | 'address'
  port?: number | undefined
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/

/** `address` in the form both sides compare: IPv6 lower-case and compressed as WHATWG URLs write it. */
export function canonicalAddress(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (isIP(bare) !== 6) return bare
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1)
  } catch {
    // A scoped address (fe80::1%eth0) is valid to node but not to the URL parser: keep its text.
    return bare.toLowerCase()
  }
}

/** A host name or address as a request names it: lower case, no trailing dot, no brackets, canonical. */
export function normalizeHost(host: string): string {
  const trimmed = host.trim().toLowerCase().replace(/\.$/, '')
  return canonicalAddress(trimmed)
}

/** Whether `name` (lower case, no trailing dot) is a host name: labels of letters, digits, `-` and `_`, not all-digit last. */
export function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false
  const labels = name.split('.')
  // A name whose last label is all digits would read as an address to some resolvers.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return false
  return labels.every((label) => LABEL.test(label))
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined
  const port = Number(text)
  return port >= 1 && port <= 65535 ? port : undefined
}

/** Splits `text` into host and port text (IPv6 needs brackets to carry a port). */
function splitPort(text: string): { host: string; port?: string } | undefined {
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return undefined
    const rest = text.slice(close + 1)
    if (rest !== '' && !rest.startsWith(':')) return undefined
    return { host: text.slice(1, close), ...(rest ? { port: rest.slice(1) } : {}) }
  }
  if (isIP(text) === 6) return { host: text }
  const colon = text.lastIndexOf(':')
  if (colon < 0) return { host: text }
  return { host: text.slice(0, colon), port: text.slice(colon + 1) }
}

/** The pattern `text` stands for, or why it stands for none. */
export function parseHostPattern(text: string): HostPattern | { error: string } {
  const split = splitPort(text.trim())
  if (!split) return { error: 'an IPv6 address with a port goes in brackets: [::1]:8080' }
  let port: number | undefined
  if (split.port !== undefined) {
    port = parsePort(split.port)
    if (port === undefined) return { error: `the port must be a number from 1 to 65535 (got "${split.port}")` }
  }
  const host = split.host.toLowerCase().replace(/\.$/, '')
  if (host === '*' || host === '') return { error: 'a pattern names a host; to keep every host, use network "inherit"' }
  if (host.includes('%')) return { error: 'a scoped IPv6 address (with a %zone) cannot be listed' }
  if (isIP(host) !== 0) return { source: text, host: canonicalAddress(host), kind: 'address', port }
  if (host.startsWith('*.')) {
    const base = host.slice(2)
    if (!isHostName(base)) return { error: `"${base}" is not a host name` }
    return { source: text, host: base, kind: 'wildcard', port }
  }
  if (host.includes('*')) return { error: 'a wildcard stands only first, as "*." before a name' }
  if (!isHostName(host)) return { error: `"${host}" is not a host name or an IP address` }
  return { source: text, host, kind: 'name', port }
}

/** Whether `pattern` covers `host` (normalized) at `port`. */
export function patternMatches(pattern: HostPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false
  if (pattern.kind === 'wildcard') return host.endsWith(`.${pattern.host}`)
  return host === pattern.host
}
