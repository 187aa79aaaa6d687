/**
 * What a network allow-list's proxy saw of one run (src/sandbox/network/proxy.ts): the hosts it
 * refused, with how often and why, and the bytes each allowed host carried. A direct connection
 * or lookup that bypassed the proxy had no route at all and is not counted here.
 */

/** Why the proxy refused a destination. */
export type NetworkRefusalReason = 'denied' | 'not-allowed' | 'address' | 'server-name'

/** One run's network facts; each list holds at most 32 entries. */
export interface NetworkFacts {
  /** Each host:port refused, with how often and why. */
  refused: Array<{ host: string; port: number; count: number; reason: NetworkRefusalReason }>
  /** Refused host:ports beyond the cap. */
  refusedOmitted?: number
  /** Each allowed host:port: connections and bytes each way. */
  allowed: Array<{ host: string; port: number; connections: number; bytesSent: number; bytesReceived: number }>
}
