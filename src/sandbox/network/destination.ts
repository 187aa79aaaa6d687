/**
 * The one way the proxy reaches a destination, whatever protocol asked: the allow-list first
 * (a refused name never leaves the host, not even as a DNS query), then the name's addresses,
 * each checked by range, then a TCP connection to a checked address only (never a second
 * resolution, so a DNS answer that changes between check and use cannot lead elsewhere).
 */
import { lookup } from 'node:dns/promises'
import { connect as netConnect, isIP, type Socket } from 'node:net'
import { type CompiledAllowList, deniesAddress, refusalOf } from '../../policy/network/allow-list.js'
import { isHostName, normalizeHost } from '../../policy/network/host-pattern.js'
import type { NetworkRefusalReason } from '../../policy/network/facts.js'
import { INVALID_HOST_PREFIX } from '../../policy/network/refusals.js'
import { refusedAddress } from './address-policy.js'
import type { OnRead } from './download-relay.js'
import type { FactLedger } from './fact-ledger.js'

/** Resolves a name to its addresses. */
export type Resolver = (host: string) => Promise<string[]>
/** Opens a TCP connection to a checked address (reading into `onread`'s buffer when given). */
export type Connector = (address: string, port: number, onread?: OnRead) => Socket

/** What one run's requests are decided and recorded under. */
export interface RunScope {
  list: CompiledAllowList
  ledger: FactLedger
  resolve: Resolver
  connect: Connector
  /** Keeps `socket` for the run's end (and gives it an error handler). */
  track(socket: Socket): void
  /** Whether the run has finished (nothing new may start). */
  finished(): boolean
}

/** How an attempt to reach a destination ended. */
export type Reach =
  | { kind: 'refused'; host: string; reason: NetworkRefusalReason; message: string }
  | { kind: 'unreachable'; step: 'resolve' | 'connect'; message: string }
  | { kind: 'connected'; host: string; socket: Socket }

/** How long one TCP connection attempt may take. */
const CONNECT_TIMEOUT_MS = 15_000

/** The host's resolver: every address of `host`, IPv4 and IPv6, in the system's order. */
export const systemResolve: Resolver = async (host) => {
  // getaddrinfo stops at a NUL: the name it resolves would not be the name the list judged.
  if (isIP(host) === 0 && !isHostName(host)) throw new Error(`not a host name: ${encodeURIComponent(host)}`)
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
}

/** A plain TCP connection (the address is a literal: no lookup happens). */
export const systemConnect: Connector = (address, port, onread) =>
  netConnect({ host: address, port, ...(onread ? { onread } : {}) })

/** The sentence a refusal answers with. */
function refusalMessage(host: string, port: number, reason: NetworkRefusalReason, detail?: string): string {
  const where = `${host}:${port}`
  switch (reason) {
    case 'denied':
      return `cordon: ${where} is denied by this sandbox's network policy`
    case 'not-allowed':
      return `cordon: ${where} is not in this sandbox's network allow-list`
    case 'address':
      return `cordon: ${where} leads only to addresses this sandbox may not reach (${detail})`
    case 'server-name':
      return `cordon: the TLS hello for ${where} names another server than the tunnel's host, or cannot be read whole`
  }
}

/** Records a refusal (synchronously, before any answer) and returns it. */
export function refuse(
  scope: RunScope,
  host: string,
  port: number,
  reason: NetworkRefusalReason,
  detail?: string,
): Reach {
  scope.ledger.refuse(host, port, reason)
  return { kind: 'refused', host, reason, message: refusalMessage(host, port, reason, detail) }
}

/** One connection attempt: the socket once connected, or why not. */
function attempt(scope: RunScope, address: string, port: number, onread?: OnRead): Promise<Socket | Error> {
  return new Promise((done) => {
    let socket: Socket
    try {
      socket = scope.connect(address, port, onread)
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)))
      return
    }
    scope.track(socket)
    socket.setTimeout(CONNECT_TIMEOUT_MS)
    const fail = (error: Error) => {
      socket.destroy()
      done(error)
    }
    socket.once('timeout', () => fail(new Error(`connecting to ${address}:${port} timed out`)))
    socket.once('error', fail)
    socket.once('connect', () => {
      socket.setTimeout(0)
      socket.removeListener('error', fail)
      socket.removeAllListeners('timeout')
      done(socket)
    })
  })
}

/** The checked addresses of `host`, or the reach that ends here (refused or unresolvable). */
async function checkedAddresses(scope: RunScope, host: string, port: number): Promise<string[] | Reach> {
  let addresses: string[]
  try {
    // An address literal is its own answer: it is not resolved.
    addresses = isIP(host) !== 0 ? [host] : await scope.resolve(host)
  } catch (error) {
    return {
      kind: 'unreachable',
      step: 'resolve',
      message: `cordon: ${host} could not be resolved (${String(error)})`,
    }
  }
  const reasons: string[] = []
  let denied = false
  const checked = addresses.filter((address) => {
    if (deniesAddress(scope.list, address, port)) {
      denied = true
      return false
    }
    const why = refusedAddress(address, scope.list, port)
    if (why !== undefined) reasons.push(why)
    return why === undefined
  })
  if (checked.length > 0) return checked
  if (denied) return refuse(scope, host, port, 'denied')
  if (reasons.length === 0) {
    return { kind: 'unreachable', step: 'resolve', message: `cordon: ${host} has no addresses` }
  }
  return refuse(scope, host, port, 'address', reasons.join('; '))
}

/** Reaches `host`:`port` for a confined command, by the decision order above (a tunnel's upstream reads into `onread`). */
export async function reach(scope: RunScope, rawHost: string, port: number, onread?: OnRead): Promise<Reach> {
  const host = normalizeHost(rawHost)
  // Only a host name or an address is judged: anything else (a NUL, spaces, escapes) would be read
  // one way by the list and another by the resolver, and is recorded percent-encoded.
  if (isIP(host) === 0 && !isHostName(host))
    return refuse(scope, `${INVALID_HOST_PREFIX}${encodeURIComponent(host)}`, port, 'not-allowed')
  const listed = refusalOf(scope.list, host, port)
  if (listed !== undefined) return refuse(scope, host, port, listed)
  const addresses = await checkedAddresses(scope, host, port)
  if (!Array.isArray(addresses)) return addresses
  let last: Error | undefined
  for (const address of addresses) {
    if (scope.finished()) break
    const result = await attempt(scope, address, port, onread)
    if (!(result instanceof Error)) {
      if (!scope.finished()) return { kind: 'connected', host, socket: result }
      result.destroy()
      break
    }
    last = result
  }
  const why = last ? last.message : 'the run has finished'
  return { kind: 'unreachable', step: 'connect', message: `cordon: could not connect to ${host}:${port} (${why})` }
}
