import { createServer } from 'node:net'
import type { Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { describe, expect, it, vi } from 'vitest'
import { close, curl, listen, portOf, rawConnect, readAll, readBytes } from './fixtures.js'
import {
  connectTunnel,
  httpRelay,
  httpSeen,
  httpsRelay,
  lastRelayed,
  proxied,
  useOrigins,
  viaHttpProxy,
} from './harness.js'

useOrigins()

describe('HTTP forwarding', () => {
  it('forwards an absolute-URI GET to an allowed name and counts its exact bytes', async () => {
    const { port, run } = await proxied({ allow: ['allowed.test'] })
    const before = httpRelay.connections.length
    const out = await viaHttpProxy(port, ['http://allowed.test/hello?x=1'])
    expect(out.code).toBe(0)
    expect(out.stdout).toBe('http-origin allowed.test GET /hello?x=1 0\n200 000')
    expect(httpRelay.connections.length).toBe(before + 1)
    const relayed = await lastRelayed(httpRelay)
    await vi.waitFor(() =>
      expect(run.facts().allowed).toEqual([
        { host: 'allowed.test', port: 80, connections: 1, bytesSent: relayed.bytesIn, bytesReceived: relayed.bytesOut },
      ]),
    )
    expect(relayed.bytesIn).toBeGreaterThan(0)
    expect(run.facts().refused).toEqual([])
  })

  it('rewrites to origin-form, sets Host, drops Proxy-* and hop-by-hop headers, streams the body', async () => {
    const { port } = await proxied({ allow: ['allowed.test:8080'] })
    const body = 'x'.repeat(100_000)
    const out = await viaHttpProxy(
      port,
      [
        '-H',
        'Proxy-Authorization: Basic c2VjcmV0',
        '-H',
        'Connection: keep-alive, X-Hop',
        '-H',
        'X-Hop: gone',
        '-H',
        'X-Kept: here',
        '--data-binary',
        '@-',
        'http://allowed.test:8080/upload',
      ],
      body,
    )
    expect(out.stdout).toBe('http-origin allowed.test:8080 POST /upload 100000\n200 000')
    const seen = httpSeen.at(-1)!
    expect(seen.url).toBe('/upload')
    expect(seen.body).toBe(body)
    expect(seen.headers['x-kept']).toBe('here')
    expect(seen.headers['x-hop']).toBeUndefined()
    expect(seen.headers['proxy-authorization']).toBeUndefined()
    expect(seen.headers['proxy-connection']).toBeUndefined()
    expect(seen.headers.host).toBe('allowed.test:8080')
  })

  it('refuses a name the list does not hold with 403, never resolving it, and counts it', async () => {
    const { port, run, resolved, connected } = await proxied({ allow: ['allowed.test'] })
    const out = await curl(['-x', `http://127.0.0.1:${port}`, '-i', 'http://registry.example/pkg'])
    expect(out.stdout).toMatch(/^HTTP\/1\.1 403 /)
    expect(out.stdout).toMatch(/x-cordon-refused: not-allowed/i)
    expect(out.stdout).toContain("cordon: registry.example:80 is not in this sandbox's network allow-list")
    const again = await curl(['-x', `http://127.0.0.1:${port}`, '-i', 'http://registry.example/pkg'])
    expect(again.stdout).toMatch(/^HTTP\/1\.1 403 /)
    expect(resolved).toEqual([])
    expect(connected).toEqual([])
    expect(run.facts().refused).toEqual([{ host: 'registry.example', port: 80, count: 2, reason: 'not-allowed' }])
    // Control: the same proxy forwards a listed name.
    expect((await viaHttpProxy(port, ['http://allowed.test/'])).stdout).toMatch(/200 000$/)
    expect(resolved).toEqual(['allowed.test'])
  })

  it('decides each request on a kept-alive client connection on its own', async () => {
    const { port, run } = await proxied({ allow: ['allowed.test', 'other.test'] })
    const out = await curl([
      '-x',
      `http://127.0.0.1:${port}`,
      '-w',
      ' %{num_connects}\n',
      'http://allowed.test/one',
      'http://other.test/two',
      'http://third.test/three',
    ])
    const lines = out.stdout.split('\n')
    expect(lines[0]).toBe('http-origin allowed.test GET /one 0 1')
    // The second request reused the first connection to the proxy.
    expect(lines[1]).toBe('http-origin other.test GET /two 0 0')
    expect(lines[2]).toContain("third.test:80 is not in this sandbox's network allow-list")
    expect(run.facts().allowed.map((a) => a.host)).toEqual(['allowed.test', 'other.test'])
    expect(run.facts().refused).toMatchObject([{ host: 'third.test', reason: 'not-allowed' }])
  })

  it('answers 400 to an origin-form request and 502 when the upstream refuses the connection', async () => {
    const { port, run } = await proxied({ allow: ['dead.test'] })
    const socket = await rawConnect(port)
    const answer = readAll(socket)
    socket.write('GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
    expect((await answer).toString()).toMatch(/^HTTP\/1\.1 400 /)
    const dead = await viaHttpProxy(port, ['http://dead.test/'])
    expect(dead.stdout).toMatch(/502 000$/)
    // A connect failure is not a refusal.
    expect(run.facts()).toEqual({ refused: [], allowed: [] })
  })
})

describe('CONNECT tunnels', () => {
  it('tunnels HTTPS to an allowed host (curl) and counts the exact bytes', async () => {
    const { port, run } = await proxied({ allow: ['secure.test:443'] })
    const out = await viaHttpProxy(port, ['-k', 'https://secure.test/tls'])
    expect(out.stdout).toBe('https-origin secure.test GET /tls 0\n200 200')
    const relayed = await lastRelayed(httpsRelay)
    await vi.waitFor(() =>
      expect(run.facts().allowed).toEqual([
        { host: 'secure.test', port: 443, connections: 1, bytesSent: relayed.bytesIn, bytesReceived: relayed.bytesOut },
      ]),
    )
    expect(relayed.bytesIn).toBeGreaterThan(200)
  })

  it('refuses a CONNECT to an unlisted host with 403 and the reason header', async () => {
    const { port, run, resolved } = await proxied({ allow: ['secure.test:443'] })
    const out = await viaHttpProxy(port, ['-k', 'https://evil.test/'])
    expect(out.stdout).toMatch(/403$/)
    const raw = await rawConnect(port)
    const answer = readAll(raw)
    raw.write('CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n')
    const text = (await answer).toString()
    expect(text).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(text).toContain('X-Cordon-Refused: not-allowed\r\n')
    expect(text).toContain("cordon: evil.test:443 is not in this sandbox's network allow-list")
    expect(resolved).toEqual([])
    expect(run.facts().refused).toEqual([{ host: 'evil.test', port: 443, count: 2, reason: 'not-allowed' }])
  })

  it('refuses a TLS hello naming another server before a byte reaches upstream', async () => {
    const { port, run } = await proxied({ allow: ['secure.test:443', 'front.test:443'] })
    const before = httpsRelay.connections.length
    const tunnel = await connectTunnel(port, 'secure.test:443')
    expect(tunnel.status).toBe(200)
    const tls = tlsConnect({ socket: tunnel.socket, servername: 'front.test', rejectUnauthorized: false })
    const outcome = await new Promise<string>((resolve) => {
      tls.once('secureConnect', () => resolve('secure'))
      tls.once('error', () => resolve('error'))
      tls.once('close', () => resolve('closed'))
    })
    expect(outcome).not.toBe('secure')
    expect(httpsRelay.connections.length).toBe(before + 1)
    const relayed = await lastRelayed(httpsRelay)
    expect(relayed.bytesIn).toBe(0)
    expect(run.facts()).toEqual({
      refused: [{ host: 'front.test', port: 443, count: 1, reason: 'server-name' }],
      allowed: [],
    })
  })

  it('control: the same tunnel with the matching server name reaches the server', async () => {
    const { port, run } = await proxied({ allow: ['secure.test:443'] })
    const tunnel = await connectTunnel(port, 'secure.test:443')
    const tls = tlsConnect({ socket: tunnel.socket, servername: 'SECURE.test.', rejectUnauthorized: false })
    await new Promise<void>((resolve, reject) => {
      tls.once('secureConnect', () => resolve())
      tls.once('error', reject)
    })
    tls.write('GET /named HTTP/1.1\r\nHost: secure.test\r\nConnection: close\r\n\r\n')
    const reply = (await readAll(tls as unknown as Socket)).toString()
    expect(reply).toContain('https-origin secure.test GET /named 0')
    expect(run.facts().refused).toEqual([])
  })

  it('lets a server that speaks first be heard before the client says anything', async () => {
    const banner = await listen(
      createServer((socket) => {
        socket.on('error', () => {})
        socket.write('220 banner\r\n')
        socket.on('data', (chunk: Buffer) => socket.end(`echo ${chunk}`))
      }),
    )
    try {
      const target = `127.0.0.1:${portOf(banner)}`
      const { port, run } = await proxied({ allow: [target] })
      const tunnel = await connectTunnel(port, target)
      expect(tunnel.status).toBe(200)
      const greeting = tunnel.head.length > 0 ? tunnel.head : await readBytes(tunnel.socket, 12)
      expect(greeting.toString()).toBe('220 banner\r\n')
      const rest = readAll(tunnel.socket)
      tunnel.socket.write('HELO')
      expect((await rest).toString()).toBe('echo HELO')
      expect(run.facts().allowed).toMatchObject([{ host: '127.0.0.1', bytesSent: 4, bytesReceived: 21 }])
    } finally {
      await close(banner)
    }
  })

  it('passes a plain (non-TLS) protocol through a tunnel', async () => {
    const { port } = await proxied({ allow: ['allowed.test:80'] })
    const tunnel = await connectTunnel(port, 'allowed.test:80')
    expect(tunnel.status).toBe(200)
    const reply = readAll(tunnel.socket)
    tunnel.socket.end('GET /plain HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n')
    expect((await reply).toString()).toContain('http-origin allowed.test GET /plain 0')
  })
})
