/**
 * A tunnel between a confined client and an upstream it was allowed to reach (HTTP CONNECT or
 * SOCKS5). The client's first bytes are held until they show whether they open TLS: a
 * ClientHello naming another server than the tunnel's host is refused before a byte of it
 * reaches upstream, as is one that cannot be read whole. A nameless hello, and a Host header
 * inside TLS (or ECH), cannot be judged without intercepting TLS; those pass, as every non-TLS
 * protocol does.
 */
import type { Socket } from 'node:net'
import { normalizeHost } from '../../policy/network/host-pattern.js'
import type { RunScope } from './destination.js'
import { refuse } from './destination.js'
import { DownloadRelay } from './download-relay.js'
import { probeTls, TLS_PROBE_LIMIT } from './tls-server-name.js'

/** What the tunnel was opened to. */
export interface TunnelEnds {
  client: Socket
  upstream: Socket
  /** The normalized host the client asked for, and its port. */
  host: string
  port: number
  /** Client bytes already read past the request (HTTP's `head`, SOCKS5's optimistic data). */
  head?: Buffer | undefined
  /** How long the client may stay silent before its first bytes. */
  idleMs: number
  /** The relay whose `onread` the upstream was connected with (default: one that takes its 'data'). */
  relay?: DownloadRelay | undefined
}

/** Connects both ends (`count` counts the connection, once). */
function splice(ends: TunnelEnds, held: Buffer, count: () => void): void {
  const { client, upstream } = ends
  client.setTimeout(0)
  count()
  if (held.length > 0) upstream.write(held)
  client.pipe(upstream)
  client.resume()
  linkEnds(client, upstream)
  linkEnds(upstream, client)
}

/** When `from` closes, `to` ends too: gracefully (its queued bytes still go) unless `from` failed. */
function linkEnds(from: Socket, to: Socket): void {
  from.once('close', (hadError) => {
    if (hadError) to.destroy()
    else to.end()
  })
}

/** Runs the tunnel: holds the client's first bytes until judged, then splices or refuses. */
export function runTunnel(scope: RunScope, ends: TunnelEnds): void {
  const { client, upstream } = ends
  // Counted once spliced, or as soon as a server that speaks first sends (before the client's
  // bytes are judged, or when the client never sends at all); a tunnel refused before either, never.
  let counted = false
  const count = () => {
    if (counted) return
    counted = true
    scope.ledger.connection(ends.host, ends.port, upstream)
  }
  upstream.once('data', count)
  // The server's bytes may flow at once: a protocol where the server speaks first must not wait.
  ;(ends.relay ?? new DownloadRelay()).start(client, upstream, count)
  client.setTimeout(ends.idleMs)
  let held = ends.head ?? Buffer.alloc(0)
  // `final`: the client has ended its sending; what it sent is all there is to judge.
  const judge = (final = false): boolean => {
    const probe = probeTls(held)
    if (probe.kind === 'need-more' && held.length < TLS_PROBE_LIMIT && !final) return false
    client.removeListener('end', onEnd)
    client.removeListener('data', onData)
    client.removeListener('close', onEarlyClose)
    upstream.removeListener('close', onUpstreamEarlyClose)
    client.pause()
    if (upstream.destroyed) {
      // The server hung up while the client was still being judged: nothing to splice to.
      client.destroy()
      return true
    }
    const named = probe.kind === 'tls' && probe.serverName !== undefined ? normalizeHost(probe.serverName) : undefined
    // A hello that opens like TLS but cannot be read whole (cut short, split past the limit,
    // malformed) names a server no one can check: refused, as the tunnel's host.
    const unreadable =
      (probe.kind === 'tls' && probe.unreadable === true) || (probe.kind === 'need-more' && held[0] === 0x16)
    if (unreadable || (named !== undefined && named !== ends.host)) {
      refuse(scope, unreadable || named === undefined ? ends.host : named, ends.port, 'server-name')
      upstream.destroy()
      client.destroy()
    } else splice(ends, held, count)
    return true
  }
  const onData = (chunk: Buffer) => {
    held = Buffer.concat([held, chunk])
    judge()
  }
  // A client gone before it was judged takes its upstream with it.
  const onEarlyClose = () => upstream.destroy()
  // A server gone first: the client gets what it sent (piped above), then the end.
  const onUpstreamEarlyClose = () => client.end()
  const onEnd = () => judge(true)
  if (judge()) return
  client.on('data', onData)
  client.once('end', onEnd)
  client.once('close', onEarlyClose)
  upstream.once('close', onUpstreamEarlyClose)
  client.resume()
}
