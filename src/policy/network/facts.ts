/**
 * What a run's network proxy saw, as facts for the run's result: each destination refused (and
 * why) and each destination reached (with its traffic). Vocabulary only; the proxy
 * (src/sandbox/network/proxy.ts) fills it in.
 */

/** Why the proxy refused a destination: the list's word, where the name led, or a TLS name that was not the one asked for. */
export type NetworkRefusalReason = 'denied' | 'not-allowed' | 'address' | 'server-name'

/** One refused host:port, with how often and why. */
export interface RefusedDestination {
  host: string
  port: number
  count: number
  reason: NetworkRefusalReason
}

/** One allowed host:port, with its connections and bytes each way (as seen at the upstream socket). */
export interface AllowedDestination {
  host: string
  port: number
  connections: number
  bytesSent: number
  bytesReceived: number
}

/** The most entries each list of facts holds; the rest are counted, not itemized. */
export const NETWORK_FACTS_CAP = 32

/** A run's network facts. */
export interface NetworkFacts {
  /** Each host:port refused, with how often and why; at most 32 entries, further refusals counted in `refusedOmitted`. */
  refused: RefusedDestination[]
  refusedOmitted?: number
  /** Each allowed host:port: connections and bytes each way; at most 32 entries, further connections counted in `allowedOmitted`. */
  allowed: AllowedDestination[]
  allowedOmitted?: number
}
