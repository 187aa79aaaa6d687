import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { connect as tlsConnect } from 'node:tls'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { NetworkAllowList } from '../../../../src/policy/vocabulary.js'
import { NetworkProxy, type NetworkProxyOptions, type ProxiedRun } from '../../../../src/sandbox/network/proxy.js'
import {
  close,
  curl,
  listen,
  portOf,
  rawConnect,
  readAll,
  readBytes,
  type RelayedConnection,
  type SeenRequest,
  selfSignedCert,
  startHttpOrigin,
  startHttpsOrigin,
  startRelay,
} from './fixtures.js'

// Stand-in answers of the test resolver: documentation addresses for the public names
// (the proxy must not refuse those), and the ranges it must refuse for the rest.
const NAMES: Record<string, string[]> = {
  'allowed.test': ['198.51.100.1'],
  'other.test': ['198.51.100.1'],
  'secure.test': ['198.51.100.2'],
  'front.test': ['198.51.100.2'],
  'dead.test': ['198.51.100.9'],
  'loop.test': ['127.0.0.1'],
  'meta.test': ['169.254.169.254'],
  'private.test': ['10.1.2.3'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'mixed.test': ['10.0.0.1', '198.51.100.1'],
}

const httpSeen: SeenRequest[] = []
const httpsSeen: SeenRequest[] = []
const servers: Server[] = []
let httpRelay: { server: Server; connections: RelayedConnection[] }
let httpsRelay: { server: Server; connections: RelayedConnection[] }
let deadPort: number

beforeAll(async () => {
  const httpOrigin = await startHttpOrigin(httpSeen)
  const cert = await selfSignedCert(['secure.test', 'front.test', 'other.test'])
  const httpsOrigin = await startHttpsOrigin(httpsSeen, cert)
  httpRelay = await startRelay(portOf(httpOrigin))
  httpsRelay = await startRelay(portOf(httpsOrigin))
  const dead = await listen(createServer())
  deadPort = portOf(dead)
  await close(dead)
  servers.push(httpOrigin, httpsOrigin, httpRelay.server, httpsRelay.server)
})

afterAll(async () => {
  for (const server of servers) await close(server)
})

/** The test's resolver (with a spy on every name asked) and connector (stand-in address → loopback relay). */
function testNetwork() {
  const resolved: string[] = []
  const connected: string[] = []
  const options: NetworkProxyOptions = {
    resolve: async (host) => {
      resolved.push(host)
      const many = /^[a-z0-9-]+\.many\.test$/.test(host) ? ['198.51.100.1'] : undefined
      const addresses = NAMES[host] ?? many
      if (!addresses) throw new Error(`ENOTFOUND ${host}`)
      return addresses
    },
    connect: (address, port) => {
      connected.push(`${address}:${port}`)
      if (address === '198.51.100.1') return netConnect(portOf(httpRelay.server), '127.0.0.1')
      if (address === '198.51.100.2') return netConnect(portOf(httpsRelay.server), '127.0.0.1')
      if (address === '198.51.100.9') return netConnect(deadPort, '127.0.0.1')
      return netConnect(port, address)
    },
  }
  return { resolved, connected, options }
}

const open: Array<{ proxy: NetworkProxy; listener: Server }> = []

/** A proxy attached to a fresh loopback listener under `list`. */
async function proxied(list: NetworkAllowList, extra: Partial<NetworkProxyOptions> = {}) {
  const network = testNetwork()
  const proxy = new NetworkProxy({ ...network.options, ...extra })
  const listener = await listen(createServer())
  open.push({ proxy, listener })
  const run: ProxiedRun = proxy.attach(listener, list)
  return { ...network, proxy, listener, run, port: portOf(listener) }
}

afterEach(async () => {
  for (const { proxy } of open.splice(0)) await proxy.close()
})

/** curl through the proxy's HTTP face, printing the status code last. */
function viaHttpProxy(port: number, args: string[], input?: string) {
  return curl(['-x', `http://127.0.0.1:${port}`, '-w', '\n%{http_code} %{http_connect}', ...args], input)
}

/** The newest relay connection's counts once it has closed. */
async function lastRelayed(relay: { connections: RelayedConnection[] }) {
  const last = relay.connections.at(-1)!
  await last.closed
  return last
}

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

describe('the allow-list', () => {
  it('lets deny beat allow, matches wildcards on subdomains only, and honours ports', async () => {
    const { port, run, resolved } = await proxied({
      allow: ['*.many.test', 'allowed.test:80'],
      deny: ['bad.many.test'],
    })
    const ok = await viaHttpProxy(port, ['http://good.many.test/'])
    expect(ok.stdout).toMatch(/^http-origin good\.many\.test GET \/ 0\n200 000$/)
    const bad = await curl(['-x', `http://127.0.0.1:${port}`, '-i', 'http://bad.many.test/'])
    expect(bad.stdout).toMatch(/x-cordon-refused: denied/i)
    const bare = await curl(['-x', `http://127.0.0.1:${port}`, '-i', 'http://many.test/'])
    expect(bare.stdout).toMatch(/x-cordon-refused: not-allowed/i)
    const otherPort = await curl(['-x', `http://127.0.0.1:${port}`, '-i', 'http://allowed.test:8080/'])
    expect(otherPort.stdout).toMatch(/x-cordon-refused: not-allowed/i)
    const rightPort = await viaHttpProxy(port, ['http://allowed.test:80/'])
    expect(rightPort.stdout).toMatch(/200 000$/)
    expect(resolved).toEqual(['good.many.test', 'allowed.test'])
    expect(run.facts().refused).toEqual([
      { host: 'bad.many.test', port: 80, count: 1, reason: 'denied' },
      { host: 'many.test', port: 80, count: 1, reason: 'not-allowed' },
      { host: 'allowed.test', port: 8080, count: 1, reason: 'not-allowed' },
    ])
  })
})

describe('addresses a name leads to', () => {
  it.each([
    ['loop.test', '127.0.0.1'],
    ['meta.test', '169.254.169.254'],
    ['private.test', '10.1.2.3'],
    ['mapped.test', '::ffff:127.0.0.1'],
  ])('refuses %s (resolving to %s) with reason address, connecting nowhere', async (name) => {
    const { port, run, connected } = await proxied({ allow: [name, 'allowed.test'] })
    const out = await curl(['-x', `http://127.0.0.1:${port}`, '-i', `http://${name}/`])
    expect(out.stdout).toMatch(/^HTTP\/1\.1 403 /)
    expect(out.stdout).toMatch(/x-cordon-refused: address/i)
    expect(connected).toEqual([])
    expect(run.facts().refused).toEqual([{ host: name, port: 80, count: 1, reason: 'address' }])
    // Control: a listed name resolving to a public address goes through.
    expect((await viaHttpProxy(port, ['http://allowed.test/'])).stdout).toMatch(/200 000$/)
  })

  it('connects only to the checked addresses of a name', async () => {
    const { port, connected } = await proxied({ allow: ['mixed.test'] })
    expect((await viaHttpProxy(port, ['http://mixed.test/'])).stdout).toMatch(/200 000$/)
    expect(connected).toEqual(['198.51.100.1:80'])
  })

  it('reaches a loopback address the list names literally, and not otherwise', async () => {
    const target = portOf(httpRelay.server)
    const literal = await proxied({ allow: [`127.0.0.1:${target}`] })
    const out = await viaHttpProxy(literal.port, [`http://127.0.0.1:${target}/lit`])
    expect(out.stdout).toMatch(/^http-origin 127\.0\.0\.1:\d+ GET \/lit 0\n200 000$/)
    expect(literal.resolved).toEqual([])
    const unlisted = await proxied({ allow: ['allowed.test'] })
    const refused = await curl(['-x', `http://127.0.0.1:${unlisted.port}`, '-i', `http://127.0.0.1:${target}/lit`])
    expect(refused.stdout).toMatch(/x-cordon-refused: not-allowed/i)
  })
})

/** A CONNECT through the proxy with node:http: the status and, on 200, the tunnel's socket. */
function connectTunnel(port: number, target: string): Promise<{ status: number; socket: Socket; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'CONNECT', path: target })
    req.on('connect', (res, socket, head) => resolve({ status: res.statusCode!, socket, head }))
    req.on('error', reject)
    req.end()
  })
}

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

  it('passes a plain (non-TLS) protocol through a tunnel', async () => {
    const { port } = await proxied({ allow: ['allowed.test:80'] })
    const tunnel = await connectTunnel(port, 'allowed.test:80')
    expect(tunnel.status).toBe(200)
    const reply = readAll(tunnel.socket)
    tunnel.socket.end('GET /plain HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n')
    expect((await reply).toString()).toContain('http-origin allowed.test GET /plain 0')
  })
})

/** A raw SOCKS5 CONNECT: the greeting's method, the reply code, and the socket. */
async function socksConnect(port: number, address: Buffer, destPort: number) {
  const socket = await rawConnect(port)
  socket.on('error', () => {})
  socket.write(Buffer.from([5, 1, 0]))
  const method = (await readBytes(socket, 2))[1]
  const portBytes = Buffer.alloc(2)
  portBytes.writeUInt16BE(destPort)
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), address, portBytes]))
  const reply = await readBytes(socket, 10)
  return { method, code: reply[1], socket }
}

const domain = (name: string) => Buffer.concat([Buffer.from([3, name.length]), Buffer.from(name)])

describe('SOCKS5', () => {
  it('reaches an allowed name with remote resolution (curl --socks5-hostname) and counts the bytes', async () => {
    const { port, run, resolved } = await proxied({ allow: ['allowed.test'] })
    const out = await curl(['--socks5-hostname', `127.0.0.1:${port}`, '-w', '\n%{http_code}', 'http://allowed.test/s'])
    expect(out.stdout).toBe('http-origin allowed.test GET /s 0\n200')
    expect(resolved).toEqual(['allowed.test'])
    const relayed = await lastRelayed(httpRelay)
    await vi.waitFor(() =>
      expect(run.facts().allowed).toEqual([
        { host: 'allowed.test', port: 80, connections: 1, bytesSent: relayed.bytesIn, bytesReceived: relayed.bytesOut },
      ]),
    )
  })

  it('tunnels HTTPS over SOCKS5 (curl -k)', async () => {
    const { port } = await proxied({ allow: ['secure.test:443'] })
    const out = await curl(['--socks5-hostname', `127.0.0.1:${port}`, '-k', 'https://secure.test/s5'])
    expect(out.stdout).toBe('https-origin secure.test GET /s5 0')
  })

  it('answers 0x02 to an unlisted name without resolving it, 0x05 to a dead upstream', async () => {
    const { port, run, resolved } = await proxied({ allow: ['allowed.test', 'dead.test'] })
    const refused = await socksConnect(port, domain('evil.test'), 443)
    expect(refused.method).toBe(0)
    expect(refused.code).toBe(0x02)
    const dead = await socksConnect(port, domain('dead.test'), 80)
    expect(dead.code).toBe(0x05)
    const ok = await socksConnect(port, domain('allowed.test'), 80)
    expect(ok.code).toBe(0x00)
    ok.socket.destroy()
    expect(resolved).toEqual(['dead.test', 'allowed.test'])
    expect(run.facts().refused).toEqual([{ host: 'evil.test', port: 443, count: 1, reason: 'not-allowed' }])
  })

  it('decides an IPv4 address literal by the list like any host', async () => {
    const target = portOf(httpRelay.server)
    const { port, resolved } = await proxied({ allow: [`127.0.0.1:${target}`] })
    const ok = await socksConnect(port, Buffer.from([1, 127, 0, 0, 1]), target)
    expect(ok.code).toBe(0x00)
    const reply = readAll(ok.socket)
    ok.socket.end('GET /v4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect((await reply).toString()).toContain('http-origin x GET /v4 0')
    const other = await socksConnect(port, Buffer.from([1, 127, 0, 0, 2]), target)
    expect(other.code).toBe(0x02)
    const v6 = await socksConnect(port, Buffer.concat([Buffer.from([4]), Buffer.alloc(15), Buffer.from([1])]), target)
    expect(v6.code).toBe(0x02)
    expect(resolved).toEqual([])
  })

  it('refuses a scoped IPv6 name without throwing in the host', async () => {
    const { port, run, resolved } = await proxied({ allow: ['allowed.test'] })
    const scoped = await socksConnect(port, domain('FE80::1%eth0'), 80)
    expect(scoped.code).toBe(0x02)
    expect(resolved).toEqual([])
    expect(run.facts().refused).toEqual([{ host: 'fe80::1%eth0', port: 80, count: 1, reason: 'not-allowed' }])
  })

  it('refuses a method list without no-auth and a command other than CONNECT', async () => {
    const { port } = await proxied({ allow: ['allowed.test'] })
    const socket = await rawConnect(port)
    const answer = readAll(socket)
    socket.write(Buffer.from([5, 1, 2]))
    expect([...(await answer)]).toEqual([5, 0xff])
    const bind = await rawConnect(port)
    const bindAnswer = readAll(bind)
    bind.write(Buffer.concat([Buffer.from([5, 1, 0, 5, 2, 0]), domain('allowed.test'), Buffer.from([0, 80])]))
    expect([...(await bindAnswer)].slice(0, 4)).toEqual([5, 0, 5, 0x07])
  })
})

describe('facts', () => {
  it('keeps at most 32 refused and 32 allowed entries and counts the rest', async () => {
    const { port, run } = await proxied({ allow: ['*.many.test'] })
    const get = (url: string) =>
      new Promise<number>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path: url, agent: false }, (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode!))
        })
        req.on('error', () => resolve(-1))
        req.end()
      })
    for (let i = 0; i < 40; i++) expect(await get(`http://n${i}.refused.test/`)).toBe(403)
    expect(await get('http://n0.refused.test/')).toBe(403)
    for (let i = 0; i < 34; i++) expect(await get(`http://h${i}.many.test/`)).toBe(200)
    const facts = run.facts()
    expect(facts.refused).toHaveLength(32)
    expect(facts.refused[0]).toEqual({ host: 'n0.refused.test', port: 80, count: 2, reason: 'not-allowed' })
    expect(facts.refusedOmitted).toBe(8)
    expect(facts.allowed).toHaveLength(32)
    expect(facts.allowedOmitted).toBe(2)
  })
})

describe('robustness', () => {
  it('survives garbage, resets and half handshakes, and keeps serving', async () => {
    const { port } = await proxied({ allow: ['allowed.test', 'secure.test:443'] })
    const garbage = await rawConnect(port)
    const garbageAnswer = readAll(garbage)
    garbage.write(Buffer.from([0x16, 0x03, 0x01, 0xff, 0xff, 0, 1, 2, 3, 0x0d, 0x0a, 0x0d, 0x0a]))
    expect((await garbageAnswer).toString()).toMatch(/^HTTP\/1\.1 400 /)
    for (const bytes of [[5], [5, 1], [5, 1, 0, 5, 1, 0, 3, 200], [0x47, 0x45], [0x43]]) {
      const socket = await rawConnect(port)
      socket.write(Buffer.from(bytes))
      await new Promise((r) => setTimeout(r, 20))
      socket.resetAndDestroy()
    }
    const huge = await rawConnect(port)
    const hugeAnswer = readAll(huge)
    huge.write(`GET http://allowed.test/ HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect((await hugeAnswer).toString()).toMatch(/^HTTP\/1\.1 4\d\d /)
    // A reset in the middle of an open tunnel.
    const tunnel = await connectTunnel(port, 'secure.test:443')
    tunnel.socket.write(Buffer.from([0x16, 0x03, 0x01]))
    await new Promise((r) => setTimeout(r, 20))
    tunnel.socket.resetAndDestroy()
    expect((await viaHttpProxy(port, ['http://allowed.test/after'])).stdout).toMatch(/200 000$/)
  })

  it('drops a client that sends nothing within the idle time, but not one that speaks', async () => {
    const { port } = await proxied({ allow: ['allowed.test'] }, { idleMs: 300 })
    const silent = await rawConnect(port)
    const started = Date.now()
    await readAll(silent)
    expect(Date.now() - started).toBeLessThan(5_000)
    const speaking = await rawConnect(port)
    const answer = readAll(speaking)
    speaking.write('GET http://allowed.test/idle HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n')
    expect((await answer).toString()).toContain('http-origin allowed.test GET /idle 0')
  })

  it('finish() closes the listener and the open tunnels and returns the final facts', async () => {
    const { port, run } = await proxied({ allow: ['allowed.test:80'] })
    const tunnel = await connectTunnel(port, 'allowed.test:80')
    tunnel.socket.write('GET /held HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
    await vi.waitFor(() => expect(run.facts().allowed[0]?.bytesReceived).toBeGreaterThan(0))
    const closed = readAll(tunnel.socket)
    const final = run.finish()
    await closed
    expect(final.allowed).toMatchObject([{ host: 'allowed.test', port: 80, connections: 1 }])
    expect(run.finish()).toEqual(final)
    expect(run.facts()).toEqual(final)
    await expect(rawConnect(port)).rejects.toThrow(/ECONNREFUSED/)
  })
})

describe('a listening socket handed over as a descriptor', () => {
  it('serves the fd, owns it, and closes it on finish', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cordon-proxy-fd-'))
    try {
      // The proxy bundled for a plain node child, which gets a listening socket made by python.
      await build({
        entryPoints: [fileURLToPath(new URL('../../../../src/sandbox/network/proxy.ts', import.meta.url))],
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: join(dir, 'proxy.mjs'),
        logLevel: 'silent',
      })
      writeFileSync(join(dir, 'driver.mjs'), FD_DRIVER)
      const python = [
        'import os, socket, sys',
        's = socket.socket()',
        "s.bind(('127.0.0.1', 0))",
        's.listen(16)',
        's.set_inheritable(True)',
        'port = s.getsockname()[1]',
        'os.execvp(sys.argv[1], [sys.argv[1], sys.argv[2], str(s.fileno()), str(port), sys.argv[3]])',
      ].join('\n')
      const origin = portOf(httpRelay.server)
      const child = spawn('python3', ['-c', python, process.execPath, join(dir, 'driver.mjs'), String(origin)], {
        stdio: ['pipe', 'pipe', 'inherit'],
      })
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
      const ready = (await lines.next()).value as string
      const port = Number(/^ready (\d+)$/.exec(ready)?.[1])
      expect(port).toBeGreaterThan(0)
      const ok = await viaHttpProxy(port, ['http://allowed.test/fd'])
      expect(ok.stdout).toBe('http-origin allowed.test GET /fd 0\n200 000')
      const refused = await viaHttpProxy(port, ['http://evil.test/'])
      expect(refused.stdout).toMatch(/403 000$/)
      child.stdin!.write('finish\n')
      const facts = JSON.parse((await lines.next()).value as string)
      expect(facts.refused).toEqual([{ host: 'evil.test', port: 80, count: 1, reason: 'not-allowed' }])
      expect(facts.allowed).toMatchObject([{ host: 'allowed.test', port: 80, connections: 1 }])
      // The child is still alive, but the listener it was handed is closed.
      await expect(rawConnect(port)).rejects.toThrow(/ECONNREFUSED/)
      child.stdin!.end()
      expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** The child's side: attach the inherited fd, report, finish on request, exit when stdin ends. */
const FD_DRIVER = `
import { connect } from 'node:net'
import { createInterface } from 'node:readline'
import { NetworkProxy } from './proxy.mjs'
const [fd, port, origin] = process.argv.slice(2).map(Number)
const proxy = new NetworkProxy({
  resolve: async (host) => (host === 'allowed.test' ? ['198.51.100.1'] : []),
  connect: () => connect(origin, '127.0.0.1'),
})
const run = proxy.attach(fd, { allow: ['allowed.test'] })
console.log('ready ' + port)
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'finish') console.log(JSON.stringify(run.finish()))
}
await proxy.close()
`
