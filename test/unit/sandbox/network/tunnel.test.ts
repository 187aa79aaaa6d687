/**
 * runTunnel (src/sandbox/network/tunnel.ts) between real loopback sockets: a client connected to
 * a front listener (the proxy's side of it is the tunnel's client end) and an upstream socket
 * connected to a recording server. The server-name check holds the client's first bytes until a
 * ClientHello is judged; a foreign name never puts a byte upstream. Spliced tunnels carry bytes
 * both ways, are counted in the ledger, and end each way as their ends do.
 */
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, connect as tlsConnect, type Server as TlsServer } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { compileAllowList } from '../../../../src/policy/network/allow-list.js'
import type { RunScope } from '../../../../src/sandbox/network/destination.js'
import { FactLedger } from '../../../../src/sandbox/network/fact-ledger.js'
import { runTunnel } from '../../../../src/sandbox/network/tunnel.js'
import { close, listen, portOf, readAll, readBytes, selfSignedCert } from './fixtures.js'

/** The upstream server's end of one tunnel: what it received, and whether its peer ended. */
interface Far {
  socket: Socket
  chunks: Buffer[]
  ended: boolean
  /** Settles when the upstream socket has ended its sending or the connection closed (the far end is half-open). */
  gone: Promise<void>
}

const bytesOf = (far: Far) => Buffer.concat(far.chunks)

let front: Server
let upstreamServer: Server
let capture: Server
let tlsOrigin: TlsServer
const clientEnds: Socket[] = []
const fars: Far[] = []
const hellos: Buffer[] = []

beforeAll(async () => {
  // Half-open like the proxy's listener: a client that ends its sending still gets its answer.
  front = await listen(createServer({ allowHalfOpen: true }, (socket) => void clientEnds.push(socket)))
  upstreamServer = await listen(
    createServer({ allowHalfOpen: true }, (socket) => {
      let done!: () => void
      const far: Far = { socket, chunks: [], ended: false, gone: new Promise((r) => (done = r)) }
      fars.push(far)
      socket.on('error', () => {})
      socket.on('data', (chunk: Buffer) => far.chunks.push(chunk))
      socket.on('end', () => {
        far.ended = true
        done()
      })
      socket.on('close', () => done())
    }),
  )
  // Keeps a real TLS client's first bytes (its ClientHello) and answers nothing.
  capture = await listen(
    createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        hellos.push(chunk)
        socket.destroy()
      })
    }),
  )
  const cert = await selfSignedCert(['secure.test'])
  tlsOrigin = await listen(
    createTlsServer(cert, (socket) => {
      socket.on('error', () => {})
      socket.end(`tls-origin ${(socket as unknown as { servername: string }).servername}`)
    }),
  )
})

afterAll(async () => {
  for (const socket of [...clientEnds, ...fars.map((f) => f.socket)]) socket.destroy()
  for (const server of [front, upstreamServer, capture, tlsOrigin]) await close(server)
})

/** The ClientHello node's TLS client sends for `servername` (none when undefined: an IP host sends no name). */
async function helloFor(servername?: string): Promise<Buffer> {
  const before = hellos.length
  const client = tlsConnect({
    host: '127.0.0.1',
    port: portOf(capture),
    rejectUnauthorized: false,
    ...(servername === undefined ? {} : { servername }),
  })
  client.on('error', () => {})
  await new Promise((resolve) => client.once('close', resolve))
  expect(hellos.length).toBe(before + 1)
  return hellos.at(-1)!
}

/** A connected socket to `port` (with an error handler). */
async function connected(port: number): Promise<Socket> {
  const socket = netConnect(port, '127.0.0.1')
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  return socket
}

/** The element `list` gains after `before` entries. */
async function next<T>(list: T[], before: number): Promise<T> {
  await vi.waitFor(() => expect(list.length).toBeGreaterThan(before))
  return list[before]!
}

interface Opened {
  /** The confined command's socket. */
  app: Socket
  /** The proxy's side of it: the tunnel's client end. */
  client: Socket
  upstream: Socket
  /** The upstream server's end, when the upstream is the recording server. */
  far: Far | undefined
  ledger: FactLedger
}

/** Opens a tunnel to `host`:`port` over real sockets, the way the proxy's fronts hand one over. */
async function openTunnel(
  options: { host?: string; port?: number; head?: Buffer; idleMs?: number; upstreamPort?: number } = {},
): Promise<Opened> {
  const clientsBefore = clientEnds.length
  const farsBefore = fars.length
  const app = await connected(portOf(front))
  const client = await next(clientEnds, clientsBefore)
  const upstream = await connected(options.upstreamPort ?? portOf(upstreamServer))
  const far = options.upstreamPort === undefined ? await next(fars, farsBefore) : undefined
  const ledger = new FactLedger()
  const scope: RunScope = {
    list: compileAllowList({ allow: ['secure.test'] }),
    ledger,
    resolve: async () => [],
    connect: () => {
      throw new Error('a tunnel never connects')
    },
    // What the proxy's run does with every socket: a reset must never crash the host.
    track: (socket) => void socket.on('error', () => socket.destroy()),
    finished: () => false,
  }
  scope.track(client)
  scope.track(upstream)
  // Both fronts pause the client before they hand it over.
  client.pause()
  runTunnel(scope, {
    client,
    upstream,
    host: options.host ?? 'secure.test',
    port: options.port ?? 443,
    head: options.head,
    idleMs: options.idleMs ?? 30_000,
  })
  return { app, client, upstream, far, ledger }
}

/** Lets the event loop turn (bytes in flight over loopback arrive). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50))

/** Writes `bytes` in `pieces` separate writes, letting each arrive before the next. */
async function writeInPieces(socket: Socket, bytes: Buffer, pieces: number): Promise<void> {
  const size = Math.ceil(bytes.length / pieces)
  for (let at = 0; at < bytes.length; at += size) {
    socket.write(bytes.subarray(at, at + size))
    await settle()
  }
}

describe('the server-name check', () => {
  it('refuses a ClientHello naming another server before a byte of it reaches upstream', async () => {
    const { app, client, upstream, far, ledger } = await openTunnel({ host: 'secure.test' })
    const hello = await helloFor('front.test')
    const appClosed = readAll(app)
    // Sent in pieces: each partial hello is held, nothing goes upstream while it is judged.
    const pieces = 4
    const size = Math.ceil(hello.length / pieces)
    for (let at = 0; at + size < hello.length; at += size) {
      app.write(hello.subarray(at, at + size))
      await settle()
      expect(bytesOf(far!).length).toBe(0)
      expect(upstream.destroyed).toBe(false)
    }
    app.write(hello.subarray(size * Math.floor((hello.length - 1) / size)))
    expect((await appClosed).length).toBe(0)
    await far!.gone
    expect(bytesOf(far!).length).toBe(0)
    expect(client.destroyed).toBe(true)
    expect(upstream.destroyed).toBe(true)
    expect(ledger.snapshot()).toEqual({
      refused: [{ host: 'front.test', port: 443, count: 1, reason: 'server-name' }],
      allowed: [],
    })
  })

  it('refuses a foreign hello that came with the request (head) at once, at the tunnel port', async () => {
    const hello = await helloFor('Elsewhere.TEST.')
    const { app, client, upstream, far, ledger } = await openTunnel({ host: 'secure.test', port: 8443, head: hello })
    expect(client.destroyed).toBe(true)
    expect(upstream.destroyed).toBe(true)
    await readAll(app)
    await far!.gone
    expect(bytesOf(far!).length).toBe(0)
    expect(ledger.snapshot().refused).toEqual([{ host: 'elsewhere.test', port: 8443, count: 1, reason: 'server-name' }])
  })

  it('passes a hello naming the tunnel’s host (case and trailing dot aside) byte for byte', async () => {
    const { app, far, ledger } = await openTunnel({ host: 'secure.test' })
    const hello = await helloFor('SECURE.Test.')
    await writeInPieces(app, hello, 3)
    await vi.waitFor(() => expect(bytesOf(far!).equals(hello)).toBe(true))
    expect(ledger.snapshot()).toEqual({
      refused: [],
      allowed: [{ host: 'secure.test', port: 443, connections: 1, bytesSent: hello.length, bytesReceived: 0 }],
    })
    app.destroy()
  })

  it('passes a hello that names no server (it cannot be judged without intercepting TLS)', async () => {
    const { app, far, ledger } = await openTunnel({ host: 'secure.test' })
    const hello = await helloFor()
    app.write(hello)
    await vi.waitFor(() => expect(bytesOf(far!).equals(hello)).toBe(true))
    expect(ledger.snapshot().refused).toEqual([])
    app.destroy()
  })

  it('carries a real TLS session for the tunnel’s host to a TLS origin', async () => {
    const { app, ledger } = await openTunnel({ host: 'secure.test', upstreamPort: portOf(tlsOrigin) })
    const tls = tlsConnect({ socket: app, servername: 'secure.test', rejectUnauthorized: false })
    const answer = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = []
      tls.on('data', (c: Buffer) => chunks.push(c))
      tls.once('error', reject)
      tls.once('end', () => resolve(Buffer.concat(chunks).toString()))
    })
    expect(answer).toBe('tls-origin secure.test')
    expect(ledger.snapshot().allowed).toMatchObject([{ host: 'secure.test', port: 443, connections: 1 }])
    tls.destroy()
  })
})

describe('splicing', () => {
  it('splices a stream that is not TLS at once and counts its bytes as the upstream saw them', async () => {
    const { app, far, ledger } = await openTunnel({ host: 'plain.test', port: 80 })
    const request = 'GET / HTTP/1.1\r\nHost: plain.test\r\n\r\n'
    app.write(request.slice(0, 1))
    await vi.waitFor(() => expect(bytesOf(far!).toString()).toBe('G'))
    const answer = readBytes(app, 'HTTP/1.1 204 No Content\r\n\r\n'.length)
    app.write(request.slice(1))
    await vi.waitFor(() => expect(bytesOf(far!).toString()).toBe(request))
    far!.socket.write('HTTP/1.1 204 No Content\r\n\r\n')
    expect((await answer).toString()).toBe('HTTP/1.1 204 No Content\r\n\r\n')
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'plain.test', port: 80, connections: 1, bytesSent: request.length, bytesReceived: 27 },
    ])
    app.destroy()
  })

  it('sends the bytes read with the request (head) first, then what follows', async () => {
    const { app, far, ledger } = await openTunnel({ host: 'plain.test', port: 80, head: Buffer.from('HEAD:') })
    app.write('BODY')
    await vi.waitFor(() => expect(bytesOf(far!).toString()).toBe('HEAD:BODY'))
    expect(ledger.snapshot().allowed).toMatchObject([{ bytesSent: 9 }])
    app.destroy()
  })

  it('lets the server speak first, before the client sent anything, and counts those bytes too', async () => {
    const { app, far, ledger } = await openTunnel({ host: 'smtp.test', port: 25 })
    const banner = readBytes(app, 12)
    far!.socket.write('220 ready\r\n\n')
    expect((await banner).toString()).toBe('220 ready\r\n\n')
    // Not judged yet, but the server spoke: counted already (a client that never sends still shows).
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'smtp.test', port: 25, connections: 1, bytesSent: 0, bytesReceived: 12 },
    ])
    app.write('EHLO x\r\n')
    await vi.waitFor(() => expect(bytesOf(far!).toString()).toBe('EHLO x\r\n'))
    // Spliced: still the one connection.
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'smtp.test', port: 25, connections: 1, bytesSent: 8, bytesReceived: 12 },
    ])
    app.destroy()
  })

  it('refuses a hello cut short by the client’s end (it cannot be judged), as the tunnel’s host', async () => {
    const { app, upstream, far, ledger } = await openTunnel({ port: 8443 })
    const closed = readAll(app)
    app.end(Buffer.from([0x16, 0x03, 0x01]))
    expect((await closed).length).toBe(0)
    await far!.gone
    expect(bytesOf(far!).length).toBe(0)
    expect(upstream.destroyed).toBe(true)
    expect(ledger.snapshot()).toEqual({
      refused: [{ host: 'secure.test', port: 8443, count: 1, reason: 'server-name' }],
      allowed: [],
    })
  })

  it('refuses a handshake whose ClientHello cannot be read whole, without a byte upstream', async () => {
    const { app, far, ledger } = await openTunnel()
    const closed = readAll(app)
    // One handshake record whose ClientHello claims 128 KiB: more than any hello is read.
    app.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x02, 0x00, 0x00]))
    await closed
    await far!.gone
    expect(bytesOf(far!).length).toBe(0)
    expect(ledger.snapshot().refused).toEqual([{ host: 'secure.test', port: 443, count: 1, reason: 'server-name' }])
  })

  it('a client that ends its sending after the splice still gets the answer (half-open)', async () => {
    const { app, far } = await openTunnel({ host: 'plain.test', port: 80 })
    const answer = readAll(app)
    app.end('GET / HTTP/1.0\r\n\r\n')
    await vi.waitFor(() => expect(far!.ended).toBe(true))
    far!.socket.end('late answer')
    expect((await answer).toString()).toBe('late answer')
  })

  it('stops the idle clock once spliced, and leaves it running while the client is silent', async () => {
    const silent = await openTunnel({ idleMs: 100 })
    expect(silent.client.timeout).toBe(100)
    await new Promise((resolve) => silent.client.once('timeout', resolve))
    silent.app.destroy()
    const speaking = await openTunnel({ host: 'plain.test', idleMs: 100 })
    let timedOut = false
    speaking.client.once('timeout', () => {
      timedOut = true
    })
    speaking.app.write('x')
    await vi.waitFor(() => expect(bytesOf(speaking.far!).toString()).toBe('x'))
    expect(speaking.client.timeout ?? 0).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(timedOut).toBe(false)
    speaking.app.destroy()
  })
})

describe('teardown', () => {
  it('a client gone before it was judged takes the upstream with it, unsent and uncounted', async () => {
    const { app, upstream, far, ledger } = await openTunnel()
    app.write(Buffer.from([0x16, 0x03]))
    await settle()
    // Gone, not ended: a client that only ends its sending is judged on what it sent (above).
    app.resetAndDestroy()
    await far!.gone
    expect(upstream.destroyed).toBe(true)
    expect(bytesOf(far!).length).toBe(0)
    expect(ledger.snapshot()).toEqual({ refused: [], allowed: [] })
  })

  it('an upstream reset while the client is being judged ends the client; its later bytes go nowhere', async () => {
    const { app, client, upstream, far, ledger } = await openTunnel()
    const answer = readAll(app)
    app.write(Buffer.from([0x16, 0x03, 0x01]))
    await settle()
    far!.socket.write('bye')
    await settle()
    far!.socket.resetAndDestroy()
    await vi.waitFor(() => expect(upstream.destroyed).toBe(true))
    // The client's sending side is still open (half-open): what it sends now is judged and dropped.
    await vi.waitFor(() => expect(client.writableEnded).toBe(true))
    app.write(Buffer.alloc(400, 0))
    expect((await answer).toString()).toBe('bye')
    expect(client.destroyed).toBe(true)
    // Counted when the server spoke; none of the client's bytes went upstream.
    expect(ledger.snapshot()).toEqual({
      refused: [],
      allowed: [{ host: 'secure.test', port: 443, connections: 1, bytesSent: 0, bytesReceived: 3 }],
    })
  })

  it('ends gracefully each way: the client’s end reaches upstream, the upstream’s answer and end reach the client', async () => {
    const { app, client, upstream, far, ledger } = await openTunnel({ host: 'plain.test', port: 80 })
    const answer = readAll(app)
    app.end('ping')
    await vi.waitFor(() => expect(far!.ended).toBe(true))
    expect(bytesOf(far!).toString()).toBe('ping')
    far!.socket.end('pong')
    expect((await answer).toString()).toBe('pong')
    await far!.gone
    await vi.waitFor(() => expect(client.destroyed && upstream.destroyed).toBe(true))
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'plain.test', port: 80, connections: 1, bytesSent: 4, bytesReceived: 4 },
    ])
  })

  it('a client reset after the splice destroys the upstream', async () => {
    const { app, upstream, far } = await openTunnel({ host: 'plain.test', port: 80 })
    app.write('x')
    await vi.waitFor(() => expect(bytesOf(far!).toString()).toBe('x'))
    app.resetAndDestroy()
    await far!.gone
    expect(upstream.destroyed).toBe(true)
  })

  it('an upstream reset after the splice destroys the client', async () => {
    const { app, client, far } = await openTunnel({ host: 'plain.test', port: 80 })
    const closed = readAll(app)
    app.write('x')
    await vi.waitFor(() => expect(bytesOf(far!).toString()).toBe('x'))
    far!.socket.resetAndDestroy()
    await closed
    expect(client.destroyed).toBe(true)
  })

  it('a client closed after the splice (not failed) ends the upstream gracefully: its queued bytes still go', async () => {
    const { app, client, upstream, far } = await openTunnel({ host: 'plain.test', port: 80 })
    // The far end stops reading, so the tunnel's writes queue up in the upstream socket.
    far!.socket.pause()
    app.write(Buffer.alloc(16 * 1024 * 1024, 7))
    await vi.waitFor(() => expect(upstream.writableLength).toBeGreaterThan(0), { timeout: 10_000 })
    // What the run does to a client on its idle timeout or at its end: destroy it, without an error.
    client.destroy()
    const written = upstream.bytesWritten
    far!.socket.resume()
    await far!.gone
    expect(bytesOf(far!).length).toBe(written)
    expect(upstream.writableEnded).toBe(true)
    app.destroy()
  })
})
