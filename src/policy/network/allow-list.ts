/**
 * A network allow-list's decision for one destination: deny wins, then allow, else refused. Only
 * names and addresses the list names are ever decided here; what a name resolves to is the
 * proxy's second check (src/sandbox/network/address-policy.ts).
 */
import type { NetworkAllowList } from '../vocabulary.js'
import { type HostPattern, normalizeHost, parseHostPattern, patternMatches } from './host-pattern.js'

/** Why a destination was refused by the list itself. */
export type ListRefusal = 'denied' | 'not-allowed'

/** A list parsed once, for many decisions. */
export interface CompiledAllowList {
  allow: readonly HostPattern[]
  deny: readonly HostPattern[]
}

function compile(patterns: readonly string[] | undefined): HostPattern[] {
  const out: HostPattern[] = []
  for (const text of patterns ?? []) {
    const parsed = parseHostPattern(text)
    // The policy was validated at the boundary; a pattern that does not parse allows nothing.
    if (!('error' in parsed)) out.push(parsed)
  }
  return out
}

/** Parses every pattern of `list` once. */
export function compileAllowList(list: NetworkAllowList): CompiledAllowList {
  return { allow: compile(list.allow), deny: compile(list.deny) }
}

/** The list's word on `host` at `port`: undefined when allowed, else why not. */
export function refusalOf(list: CompiledAllowList, host: string, port: number): ListRefusal | undefined {
  const name = normalizeHost(host)
  if (list.deny.some((p) => patternMatches(p, name, port))) return 'denied'
  if (list.allow.some((p) => patternMatches(p, name, port))) return undefined
  return 'not-allowed'
}

/** Whether a deny pattern names `address` literally (at `port`): a name that resolves to it is refused too. */
export function deniesAddress(list: CompiledAllowList, address: string, port: number): boolean {
  const canonical = normalizeHost(address)
  return list.deny.some((p) => p.kind === 'address' && patternMatches(p, canonical, port))
}

/** Whether the list names `address` literally in its allow patterns (at `port`): then no address range refuses it. */
export function namesAddressLiterally(list: CompiledAllowList, address: string, port: number): boolean {
  const canonical = normalizeHost(address)
  return list.allow.some((p) => p.kind === 'address' && patternMatches(p, canonical, port))
}
