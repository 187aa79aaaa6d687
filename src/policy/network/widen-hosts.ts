/**
 * The bash tool's `additional_hosts`: a model asks to run one command with its network allow-list
 * widened by some hosts, which the user approves like a wider mode. Pure: the patterns' check and
 * the normal form the approval digest covers (sorted, each as the list compares it), the widened
 * list, and the refusals: under `inherit` there is nothing to widen, a host the list already
 * covers widens nothing, and a host a deny pattern covers stays refused (deny wins; no approval
 * lifts it). Under `deny` the command reaches nothing, so any list is wider.
 */
import { isIP } from 'node:net'
import { displayLine } from '../display-text.js'
import type { NetworkAllowList, NetworkPolicy, SandboxMode } from '../vocabulary.js'
import { compileAllowList } from './allow-list.js'
import { type HostPattern, normalizeHost, parseHostPattern, patternMatches } from './host-pattern.js'
import type { Refusal } from './refusals.js'

/** The exact texts of the host widening's refusals. */
export const HOST_WIDENING_TEXTS = Object.freeze({
  empty: 'invalid additional_hosts: name at least one host (or leave the field out)',
  missingJustification: 'invalid escalation: additional_hosts requires a justification',
  badPatterns: (items: readonly string[]): string =>
    `invalid additional_hosts, nothing ran: ${items.join('; ')} (a host name, *.domain or an IP address, each with an optional :port)`,
  notRestricted:
    "additional_hosts: this call's network is not restricted (inherit): every host is reachable already; retry without additional_hosts",
  unconfined:
    'additional_hosts: under danger-full-access the command runs unconfined and reaches every host already; retry without additional_hosts',
  notWider: (hosts: readonly string[]): string =>
    `additional_hosts: ${hosts.map((h) => displayLine(h)).join(', ')} already allowed by this call's allow-list: the request widens nothing`,
  denied: (items: readonly string[]): string =>
    `additional_hosts: ${items.join('; ')}: a deny pattern wins over every allow pattern and no approval lifts it; nothing ran`,
})

/** `pattern` as one text: lower case, canonical address (IPv6 bracketed when it has a port), `*.` and `:port` kept. */
export function normalPattern(pattern: HostPattern): string {
  const bracketed = pattern.kind === 'address' && isIP(pattern.host) === 6 && pattern.port !== undefined
  const host = bracketed ? `[${pattern.host}]` : pattern.host
  return `${pattern.kind === 'wildcard' ? '*.' : ''}${host}${pattern.port === undefined ? '' : `:${pattern.port}`}`
}

/** The hosts as the digest covers them (normal form, sorted, each once), or every bad one named. */
export function parseAdditionalHosts(
  hosts: readonly string[],
): { ok: true; hosts: string[] } | { ok: false; error: string } {
  if (hosts.length === 0) return { ok: false, error: HOST_WIDENING_TEXTS.empty }
  const bad: string[] = []
  const normal = new Set<string>()
  for (const host of hosts) {
    const parsed = parseHostPattern(host)
    if ('error' in parsed) bad.push(`${JSON.stringify(displayLine(host))}: ${displayLine(parsed.error)}`)
    else normal.add(normalPattern(parsed))
  }
  if (bad.length > 0) return { ok: false, error: HOST_WIDENING_TEXTS.badPatterns(bad) }
  return { ok: true, hosts: [...normal].sort() }
}

/** Whether pattern `wide` reaches every destination `narrow` does (same host or a wildcard over it, every port or the same). */
export function coversPattern(wide: HostPattern, narrow: HostPattern): boolean {
  if (wide.port !== undefined && wide.port !== narrow.port) return false
  if (wide.kind === 'wildcard')
    return narrow.host.endsWith(`.${wide.host}`) || (narrow.kind === 'wildcard' && narrow.host === wide.host)
  return narrow.kind !== 'wildcard' && narrow.kind === wide.kind && narrow.host === wide.host
}

/** A widened network, or why not (`not-restricted`: inherit; `not-wider`: already allowed; `denied`: deny wins). */
export type NetworkWidening =
  | { ok: true; network: NetworkAllowList; added: string[] }
  | { ok: false; why: 'not-restricted' | 'not-wider' | 'denied'; error: string }

/**
 * `current` widened by `hosts` (normal forms, from parseAdditionalHosts): the list's own deny
 * patterns kept. Under `mode` danger-full-access no network policy applies, so nothing widens.
 */
export function widenNetwork(
  current: NetworkPolicy | undefined,
  hosts: readonly string[],
  mode?: SandboxMode,
): NetworkWidening {
  if (mode === 'danger-full-access') return { ok: false, why: 'not-restricted', error: HOST_WIDENING_TEXTS.unconfined }
  if (current === undefined || current === 'inherit')
    return { ok: false, why: 'not-restricted', error: HOST_WIDENING_TEXTS.notRestricted }
  if (current === 'deny') return { ok: true, network: { allow: [...hosts] }, added: [...hosts] }
  const { allow, deny } = compileAllowList(current)
  const denied: string[] = []
  const added: string[] = []
  for (const host of hosts) {
    const pattern = parseHostPattern(host) as HostPattern
    const by = deny.find((d) => coversPattern(d, pattern))
    if (by) denied.push(`${displayLine(host)} is covered by the deny pattern ${displayLine(by.source)}`)
    else if (!allow.some((a) => coversPattern(a, pattern))) added.push(host)
  }
  if (denied.length > 0) return { ok: false, why: 'denied', error: HOST_WIDENING_TEXTS.denied(denied) }
  if (added.length === 0) return { ok: false, why: 'not-wider', error: HOST_WIDENING_TEXTS.notWider(hosts) }
  const network: NetworkAllowList = { allow: [...current.allow, ...added] }
  if (current.deny !== undefined) network.deny = current.deny
  return { ok: true, network, added }
}

/** Whether `host` (a pattern) covers a destination the previous run was refused. */
export function refusedBefore(host: string, refused: readonly Refusal[]): boolean {
  const pattern = parseHostPattern(host)
  if ('error' in pattern) return false
  return refused.some((r) => patternMatches(pattern, normalizeHost(r.host), r.port))
}

/** How a request for hosts is named in its refusals and audit text: the mode it runs under, with the hosts (escaped). */
export function hostsRequestLabel(mode: string, hosts: readonly string[]): string {
  return `${mode} with the hosts ${hosts.map((h) => displayLine(h)).join(', ')}`
}
