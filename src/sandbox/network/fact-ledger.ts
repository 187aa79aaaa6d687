/**
 * One run's network facts as they accrue: refusals and allowed traffic per host:port, each list
 * capped so a command that tries thousands of hosts cannot grow the host's memory or the
 * run's result without bound.
 */
import type { Socket } from 'node:net'
import {
  type AllowedDestination,
  NETWORK_FACTS_CAP,
  type NetworkFacts,
  type NetworkRefusalReason,
  type RefusedDestination,
} from '../../policy/network/facts.js'

/** The facts of one run, recorded synchronously as the proxy decides. */
export class FactLedger {
  private readonly refused = new Map<string, RefusedDestination>()
  private refusedOmitted = 0
  private readonly allowed = new Map<string, AllowedDestination>()
  private allowedOmitted = 0
  /** Upstream sockets still open, with the entry their bytes belong to. */
  private readonly open = new Map<Socket, AllowedDestination>()

  /** Records one refusal of `host`:`port` for `reason` (an entry per host, port and reason). */
  refuse(host: string, port: number, reason: NetworkRefusalReason): void {
    const key = `${reason} ${host} ${port}`
    const entry = this.refused.get(key)
    if (entry) entry.count++
    else if (this.refused.size < NETWORK_FACTS_CAP) this.refused.set(key, { host, port, count: 1, reason })
    else this.refusedOmitted++
  }

  /**
   * Records one connection to `host`:`port` over `upstream`, whose bytes are counted where they
   * cross the upstream socket (its own counters: exact, and current while the socket is open).
   */
  connection(host: string, port: number, upstream: Socket): void {
    const key = `${host} ${port}`
    let entry = this.allowed.get(key)
    if (!entry) {
      if (this.allowed.size >= NETWORK_FACTS_CAP) {
        this.allowedOmitted++
        return
      }
      entry = { host, port, connections: 0, bytesSent: 0, bytesReceived: 0 }
      this.allowed.set(key, entry)
    }
    entry.connections++
    const counted = entry
    const open = this.open
    open.set(upstream, counted)
    upstream.once('close', () => {
      // Fold the closed socket's final counts into its entry.
      counted.bytesSent += upstream.bytesWritten
      counted.bytesReceived += upstream.bytesRead
      open.delete(upstream)
    })
  }

  /** A copy of the facts so far. */
  snapshot(): NetworkFacts {
    const live = new Map<AllowedDestination, { sent: number; received: number }>()
    for (const [socket, entry] of this.open) {
      const sum = live.get(entry) ?? { sent: 0, received: 0 }
      sum.sent += socket.bytesWritten
      sum.received += socket.bytesRead
      live.set(entry, sum)
    }
    const facts: NetworkFacts = {
      refused: [...this.refused.values()].map((e) => ({ ...e })),
      allowed: [...this.allowed.values()].map((e) => {
        const sum = live.get(e)
        return sum
          ? { ...e, bytesSent: e.bytesSent + sum.sent, bytesReceived: e.bytesReceived + sum.received }
          : { ...e }
      }),
    }
    if (this.refusedOmitted > 0) facts.refusedOmitted = this.refusedOmitted
    if (this.allowedOmitted > 0) facts.allowedOmitted = this.allowedOmitted
    return facts
  }
}
