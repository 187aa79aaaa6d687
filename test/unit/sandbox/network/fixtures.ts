/**
 * Real loopback servers and clients for the proxy's tests: an HTTP origin, an HTTPS origin
 * with a self-signed certificate made at test time, TCP relays in front of them that count
 * the bytes each connection carried, and curl / raw-socket clients. No mock of the network.
 */
import { execFile } from 'node:child_process'
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net'

/** The port `server` listens on. */
export function portOf(server: { address(): AddressInfo | string | null }): number {
  return (server.address() as AddressInfo).port
}

/** Starts `server` on 127.0.0.1 at a free port. */
export function listen<T extends Server>(server: T): Promise<T> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}

/** Closes `server`, ending its open connections. */
export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    ;(server as HttpServer).closeAllConnections?.()
    server.close(() => resolve())
  })
}

/** One request an origin saw. */
export interface SeenRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  rawHeaders: string[]
  body: string
}

/** Answers every request with `origin <host> <method> <url> <body length>` and records it. */
function originHandler(name: string, seen: SeenRequest[]) {
  return (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body })
      res.setHeader('x-origin', name)
      res.end(`${name} ${req.headers.host} ${req.method} ${req.url} ${body.length}`)
    })
  }
}

/** An HTTP origin on loopback. */
export async function startHttpOrigin(seen: SeenRequest[]): Promise<HttpServer> {
  return listen(createHttpServer(originHandler('http-origin', seen)))
}

export { selfSignedCert } from '../../../support/network/certificate.js'

/** An HTTPS origin on loopback. */
export async function startHttpsOrigin(
  seen: SeenRequest[],
  credentials: { key: Buffer; cert: Buffer },
): Promise<HttpsServer> {
  return listen(createHttpsServer(credentials, originHandler('https-origin', seen)))
}

/** What a relay saw of one connection: bytes from the proxy (in) and to it (out). */
export interface RelayedConnection {
  bytesIn: number
  bytesOut: number
  closed: Promise<void>
}

/** A TCP relay to `targetPort` that counts each connection's bytes (the proxy's upstream, as seen from outside it). */
export async function startRelay(targetPort: number): Promise<{ server: Server; connections: RelayedConnection[] }> {
  const connections: RelayedConnection[] = []
  // Half-open both ways: a client that ends its sending still gets the answer.
  const server = createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = connect({ port: targetPort, host: '127.0.0.1', allowHalfOpen: true })
    let done!: () => void
    const seen: RelayedConnection = { bytesIn: 0, bytesOut: 0, closed: new Promise((r) => (done = r)) }
    connections.push(seen)
    inbound.on('data', (c: Buffer) => {
      seen.bytesIn += c.length
    })
    outbound.on('data', (c: Buffer) => {
      seen.bytesOut += c.length
    })
    inbound.pipe(outbound)
    outbound.pipe(inbound)
    inbound.on('error', () => outbound.destroy())
    outbound.on('error', () => inbound.destroy())
    inbound.on('close', (hadError) => {
      if (hadError) outbound.destroy()
      done()
    })
    outbound.on('close', (hadError) => {
      if (hadError) inbound.destroy()
    })
  })
  return { server: await listen(server), connections }
}

/** A process's exit code and output. */
export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs a program without blocking the event loop (the proxy under test lives in this process). */
export function run(file: string, args: string[], input?: string): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      resolve({ code, stdout, stderr })
    })
    if (input !== undefined) child.stdin?.end(input)
  })
}

/** curl with a bounded time, silent but for errors. */
export function curl(args: string[], input?: string): Promise<RunResult> {
  return run('curl', ['-sS', '--max-time', '20', '--noproxy', '', ...args], input)
}

/** Opens a raw TCP connection to the proxy. */
export function rawConnect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Everything `socket` receives until it closes. */
export function readAll(socket: Socket): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', () => {})
    socket.on('close', () => resolve(Buffer.concat(chunks)))
  })
}

/** The next `n` bytes `socket` receives. */
export function readBytes(socket: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let held = Buffer.alloc(0)
    const onData = (c: Buffer) => {
      held = Buffer.concat([held, c])
      if (held.length >= n) {
        socket.removeListener('data', onData)
        socket.removeListener('close', onClose)
        const rest = held.subarray(n)
        if (rest.length > 0) socket.unshift(rest)
        resolve(held.subarray(0, n))
      }
    }
    const onClose = () => reject(new Error(`closed after ${held.length} of ${n} bytes`))
    socket.on('data', onData)
    socket.once('close', onClose)
  })
}
