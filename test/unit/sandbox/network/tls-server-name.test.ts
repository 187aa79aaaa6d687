import { createServer, type Server } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { probeTls, TLS_PROBE_LIMIT } from '../../../../src/sandbox/network/tls-server-name.js'
import { close, listen, portOf } from './fixtures.js'

let capture: Server
const hellos: Buffer[] = []

beforeAll(async () => {
  // A TCP server that keeps a real client's first bytes (its ClientHello) and answers nothing.
  capture = await listen(
    createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        hellos.push(chunk)
        socket.destroy()
      })
    }),
  )
})

afterAll(() => close(capture))

/** The ClientHello node's TLS client sends for `servername` (none when undefined). */
async function realHello(servername?: string): Promise<Buffer> {
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

describe('probeTls', () => {
  it('reads the server name of a real ClientHello', async () => {
    const hello = await realHello('registry.example.org')
    expect(probeTls(hello)).toEqual({ kind: 'tls', serverName: 'registry.example.org' })
  })

  it('asks for more on every proper prefix of a hello', async () => {
    const hello = await realHello('a.example')
    for (let n = 0; n < hello.length; n++) expect(probeTls(hello.subarray(0, n)).kind).toBe('need-more')
  })

  it('finds no name in a hello without SNI', async () => {
    // Node sends no server name for an IP address host.
    const hello = await realHello()
    expect(probeTls(hello)).toEqual({ kind: 'tls' })
  })

  it('says not-tls for other protocols and impossible record headers', () => {
    expect(probeTls(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'not-tls' })
    expect(probeTls(Buffer.from([0x05, 0x01, 0x00]))).toEqual({ kind: 'not-tls' })
    expect(probeTls(Buffer.from([0x16, 0x02, 0x01, 0x00, 0x10]))).toEqual({ kind: 'not-tls' })
    expect(probeTls(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x00]))).toEqual({ kind: 'not-tls' })
    expect(probeTls(Buffer.from([0x16, 0x03, 0x01, 0xff, 0xff]))).toEqual({ kind: 'not-tls' })
    // A handshake record that is not a ClientHello.
    expect(probeTls(Buffer.from([0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00]))).toEqual({ kind: 'not-tls' })
  })

  it('never throws on corrupted hellos and never invents a name', async () => {
    const hello = await realHello('exact.example')
    let seed = 12345
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed
    }
    for (let i = 0; i < 3000; i++) {
      const bytes = Buffer.from(hello)
      const flips = 1 + (random() % 4)
      for (let f = 0; f < flips; f++) bytes[5 + (random() % (bytes.length - 5))] = random() % 256
      const probe = probeTls(bytes.subarray(0, random() % (bytes.length + 1)))
      expect(['need-more', 'not-tls', 'tls']).toContain(probe.kind)
      if (probe.kind === 'tls' && probe.serverName !== undefined) expect(typeof probe.serverName).toBe('string')
    }
    // A hello whose lengths overrun itself: TLS whose name cannot be read (the tunnel refuses it).
    const overrun = Buffer.from(hello)
    overrun[5 + 4 + 2 + 32] = 0xff // session id length past the end
    expect(probeTls(overrun)).toEqual({ kind: 'tls', unreadable: true })
  })

  it('reads a hello split over several records, however small, and names its server', async () => {
    const hello = await realHello('split.example')
    const message = hello.subarray(5) // the handshake message without its record header
    for (const size of [1, 7, 100]) {
      const records: Buffer[] = []
      for (let at = 0; at < message.length; at += size) {
        const piece = message.subarray(at, at + size)
        records.push(Buffer.from([0x16, 0x03, 0x01, piece.length >> 8, piece.length & 0xff]), piece)
      }
      const split = Buffer.concat(records)
      expect(probeTls(split), `records of ${size}`).toEqual({ kind: 'tls', serverName: 'split.example' })
      // Cut short, it asks for more; interrupted by another record type, it is unreadable.
      expect(probeTls(split.subarray(0, split.length - 1)).kind).toBe('need-more')
      const interrupted = Buffer.concat([
        split.subarray(0, 5 + size),
        Buffer.from([0x17, 0x03, 0x03, 0x00, 0x01, 0x00]),
      ])
      expect(probeTls(interrupted)).toEqual({ kind: 'tls', unreadable: true })
    }
  })

  it('caps the hello it gathers: one that says it is larger is unreadable, never waited for', () => {
    expect(TLS_PROBE_LIMIT).toBe(128 * 1024)
    // A ClientHello header claiming 16 MiB - 1.
    const huge = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0xff, 0xff, 0xff])
    expect(probeTls(huge)).toEqual({ kind: 'tls', unreadable: true })
    const first = Buffer.alloc(5 + 16 * 1024)
    first.set([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00, 0x80, 0x00])
    expect(probeTls(first.subarray(0, 1000)).kind).toBe('need-more')
    expect(probeTls(first).kind).toBe('need-more') // 32 KiB asked, 16 KiB there
  })
})
