/**
 * HTTP on the proxy's listener: `CONNECT host:port` opens a tunnel, and a request with an
 * absolute `http://` URI is forwarded as plain HTTP/1.1 on a fresh upstream connection. Each
 * request is decided on its own; anything else (an origin-form `GET /`) is answered 400.
 */
import { type IncomingMessage, request as httpRequest, type ServerResponse, createServer, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { type RunScope, reach } from './destination.js'
import { DownloadRelay } from './download-relay.js'
import { runTunnel } from './tunnel.js'

/** Headers that belong to one hop and never cross the proxy. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
])

/** `rawHeaders` without hop-by-hop and Proxy-* headers, nor those the Connection header names, as [name, value] pairs. */
export function forwardableHeaders(rawHeaders: readonly string[]): Array<[string, string]> {
  const named = new Set<string>()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'connection') continue
    for (const token of rawHeaders[i + 1]!.split(',')) named.add(token.trim().toLowerCase())
  }
  const out: Array<[string, string]> = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    const lower = name.toLowerCase()
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named.has(lower)) continue
    out.push([name, rawHeaders[i + 1]!])
  }
  return out
}

/** The host and port of a CONNECT target (`host:port`, `[v6]:port`), or undefined. */
export function connectTarget(target: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(target)
  if (!match) return undefined
  const port = Number(match[2])
  if (port < 1 || port > 65535) return undefined
  try {
    // The URL parser gives the host the canonical form an absolute URI's host gets.
    return { host: new URL(`http://${match[1]}/`).hostname, port }
  } catch {
    return undefined
  }
}

/** Answers `res` with a status, optional refusal reason and a one-line body. */
function answer(res: ServerResponse, status: number, body: string, reason?: string): void {
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }
  if (reason) headers['x-cordon-refused'] = reason
  res.writeHead(status, headers).end(`${body}\n`)
}

/** The same answer on a raw socket (a CONNECT has no response object). */
function answerRaw(socket: Socket, status: number, text: string, body: string, reason?: string): void {
  const extra = reason ? `X-Cordon-Refused: ${reason}\r\n` : ''
  const payload = Buffer.from(`${body}\n`)
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\n${extra}` +
      `Content-Length: ${payload.length}\r\nConnection: close\r\n\r\n${payload}`,
  )
}

/** Forwards one absolute-URI request. */
async function forward(scope: RunScope, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let url: URL
  try {
    url = new URL(req.url ?? '')
  } catch {
    return answer(res, 400, 'cordon: this proxy forwards only absolute http:// URIs and CONNECT')
  }
  if (url.protocol !== 'http:')
    return answer(res, 400, `cordon: ${url.protocol} URIs go through CONNECT, not forwarding`)
  const port = url.port === '' ? 80 : Number(url.port)
  const result = await reach(scope, url.hostname, port)
  if (result.kind === 'refused') return answer(res, 403, result.message, result.reason)
  if (result.kind === 'unreachable') return answer(res, 502, result.message)
  const upstream = result.socket
  if (req.destroyed) return void upstream.destroy()
  scope.ledger.connection(result.host, port, upstream)
  const headers = forwardableHeaders(req.rawHeaders)
  headers.push(['Host', url.host], ['Connection', 'close'])
  const outgoing = httpRequest({
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers: headers.flat(),
    // With no agent, node uses this connection as is (an agent would open its own).
    createConnection: () => upstream,
  })
  outgoing.on('error', (error) => {
    if (!res.headersSent) answer(res, 502, `cordon: ${result.host}:${port} failed (${error.message})`)
    else res.destroy()
  })
  outgoing.on('response', (incoming) => {
    incoming.on('error', () => res.destroy())
    // The upstream is the world's: a status or reason node's parser took but its server refuses
    // (099, a control byte) must cost a 502, never a throw in the host.
    const status = incoming.statusCode ?? 502
    try {
      if (status < 100 || status > 999) throw new RangeError(`status ${status}`)
      res.writeHead(status, forwardableHeaders(incoming.rawHeaders).flat())
    } catch (error) {
      incoming.destroy()
      if (!res.headersSent)
        answer(res, 502, `cordon: ${result.host}:${port} answered what cannot be forwarded (${String(error)})`)
      else res.destroy()
      return
    }
    incoming.pipe(res)
  })
  // The client going away mid-request ends the upstream exchange too.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy()
  })
  req.pipe(outgoing)
}

/** Opens a CONNECT tunnel for one request. */
async function tunnel(scope: RunScope, req: IncomingMessage, client: Socket, head: Buffer, idleMs: number) {
  const target = connectTarget(req.url ?? '')
  if (!target) return answerRaw(client, 400, 'Bad Request', 'cordon: CONNECT needs host:port')
  const relay = new DownloadRelay()
  const result = await reach(scope, target.host, target.port, relay.onread)
  if (result.kind === 'refused') return answerRaw(client, 403, 'Forbidden', result.message, result.reason)
  if (result.kind === 'unreachable') return answerRaw(client, 502, 'Bad Gateway', result.message)
  if (client.destroyed) return void result.socket.destroy()
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
  runTunnel(scope, { client, upstream: result.socket, host: result.host, port: target.port, head, idleMs, relay })
}

/** The HTTP server (never listening: the proxy hands it connections) that serves one run. */
export function createHttpFront(scope: RunScope, idleMs: number): Server {
  // Never listening, this server runs no headers/request timers (node arms them on 'listening'):
  // the proxy's idle timer covers a silent client until its headers are in, node's header size
  // limit bounds a trickling one, and keep-alive's own timeout covers the wait between requests.
  const server = createServer()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Headers arrived: the client is not idle, and a slow upstream may take its time.
    req.socket.setTimeout(0)
    // Nothing here should throw; if it does, this request's socket ends, never the host process.
    forward(scope, req, res).catch(() => req.socket.destroy())
  })
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.setTimeout(0)
    tunnel(scope, req, client, head, idleMs).catch(() => client.destroy())
  })
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
    else socket.destroy()
  })
  return server
}
