/**
 * A run's network refusals (src/policy/network/facts.ts) as a person or a model reads them: each
 * refused host:port escaped, its reason in plain words, at most a few, then how many more. The CLI
 * adds the flag that allows a host, the bash tool the field that asks for it; both say the same.
 */
import { isIP } from 'node:net'
import { displayLine } from '../display-text.js'
import type { NetworkFacts, NetworkRefusalReason } from './facts.js'

/** How many refused destinations a denial names before "and N more". */
export const MAX_REFUSALS_SHOWN = 5

/** One refused destination, as the proxy counted it. */
export type Refusal = NetworkFacts['refused'][number]

/** Each reason the proxy refuses for, in plain words. */
export const REFUSAL_WORDS: Readonly<Record<NetworkRefusalReason, string>> = Object.freeze({
  'not-allowed': 'not in the allow-list',
  denied: 'in the deny list, which wins over every allow pattern',
  address:
    'it resolves to a private, loopback or link-local address, which only a literal address in the allow-list reaches',
  'server-name':
    'the TLS hello named another server than the host the tunnel was opened to (CONNECT or SOCKS5), or could not be read whole',
})

/** The prefix under which the proxy records a requested name that is not a host name (percent-encoded). */
export const INVALID_HOST_PREFIX = 'invalid:'

/** `host:port` as one escaped line (an IPv6 address in brackets). */
export function destinationText(host: string, port: number): string {
  const shown = isIP(host) === 6 ? `[${host}]` : host
  return displayLine(`${shown}:${port}`)
}

/** `destination (N tries): reason`, escaped. */
export function refusalText(refusal: Refusal): string {
  const tries = refusal.count > 1 ? ` (${refusal.count} tries)` : ''
  return `${destinationText(refusal.host, refusal.port)}${tries}: ${REFUSAL_WORDS[refusal.reason]}`
}

/** The refusals to name (at most `max`, in the proxy's order) and how many more there were. */
export function shownRefusals(
  facts: NetworkFacts | undefined,
  max = MAX_REFUSALS_SHOWN,
): { shown: Refusal[]; more: number } {
  const refused = facts?.refused ?? []
  const shown = refused.slice(0, max)
  return { shown, more: refused.length - shown.length + (facts?.refusedOmitted ?? 0) }
}

/** `and N more` for a count above zero, else undefined. */
export function moreText(more: number): string | undefined {
  return more > 0 ? `and ${more} more` : undefined
}
