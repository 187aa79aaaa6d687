import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { describe, expect, it, vi } from 'vitest'
import { curl, portOf, rawConnect, readAll } from './fixtures.js'
import { connectTunnel, httpRelay, proxied, useOrigins, viaHttpProxy } from './harness.js'

useOrigins()

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
