import { connect as tlsConnect } from 'node:tls'
import { describe, expect, it, vi } from 'vitest'
import { curl, portOf, rawConnect, readAll } from './fixtures.js'
import { domain, httpRelay, httpsRelay, lastRelayed, proxied, socksConnect, useOrigins } from './harness.js'

useOrigins()

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

describe('SOCKS5 tunnels and TLS server names', () => {
  it('refuses a hello naming another server than the requested name, like CONNECT does', async () => {
    const { port, run } = await proxied({ allow: ['secure.test:443', 'front.test:443'] })
    const before = httpsRelay.connections.length
    const fronted = await socksConnect(port, domain('secure.test'), 443)
    expect(fronted.code).toBe(0x00)
    const tls = tlsConnect({ socket: fronted.socket, servername: 'front.test', rejectUnauthorized: false })
    const outcome = await new Promise<string>((resolve) => {
      tls.once('secureConnect', () => resolve('secure'))
      tls.once('error', () => resolve('error'))
      tls.once('close', () => resolve('closed'))
    })
    expect(outcome).not.toBe('secure')
    expect(httpsRelay.connections.length).toBe(before + 1)
    expect((await lastRelayed(httpsRelay)).bytesIn).toBe(0)
    expect(run.facts().refused).toEqual([{ host: 'front.test', port: 443, count: 1, reason: 'server-name' }])
    // Control: the matching name gets through.
    const named = await socksConnect(port, domain('secure.test'), 443)
    const ok = tlsConnect({ socket: named.socket, servername: 'secure.test', rejectUnauthorized: false })
    await new Promise<void>((resolve, reject) => {
      ok.once('secureConnect', () => resolve())
      ok.once('error', reject)
    })
    ok.destroy()
  })
})
