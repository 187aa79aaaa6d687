import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { DownloadRelay } from '../../../../src/sandbox/network/download-relay.js'

const closers: Array<() => void> = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

/** A server that sends `bytes` of a counting pattern and ends; and a sink that collects what it gets. */
async function ends(bytes: number) {
  const pattern = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i++) pattern[i] = i % 251
  const source = net.createServer((s) => {
    s.on('error', () => {})
    s.end(pattern)
  })
  const received: Buffer[] = []
  let sinkDone: () => void = () => {}
  const sinkEnded = new Promise<void>((r) => {
    sinkDone = r
  })
  const sink = net.createServer((s) => {
    s.on('data', (d: Buffer) => received.push(d))
    s.on('end', () => sinkDone())
  })
  for (const server of [source, sink]) {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    closers.push(() => server.close())
  }
  const port = (server: net.Server) => (server.address() as net.AddressInfo).port
  return { pattern, source: port(source), sink: port(sink), received, sinkEnded }
}

describe('DownloadRelay', () => {
  it('relays every byte in order from one read buffer (onread), and counts each chunk', async () => {
    const e = await ends(3 * 1024 * 1024 + 7)
    const relay = new DownloadRelay()
    const client = net.connect(e.sink, '127.0.0.1')
    const upstream = net.connect({ port: e.source, host: '127.0.0.1', onread: relay.onread })
    closers.push(
      () => client.destroy(),
      () => upstream.destroy(),
    )
    await Promise.all([new Promise((r) => client.once('connect', r)), new Promise((r) => upstream.once('connect', r))])
    let chunks = 0
    relay.start(client, upstream, () => chunks++)
    upstream.once('close', () => client.end())
    await e.sinkEnded
    const got = Buffer.concat(e.received)
    expect(got.length).toBe(e.pattern.length)
    expect(got.equals(e.pattern)).toBe(true)
    // One read buffer of 128 KiB: at least this many chunks, each written before the next read.
    expect(chunks).toBeGreaterThanOrEqual(Math.ceil(e.pattern.length / (128 * 1024)))
    expect(upstream.bytesRead).toBe(e.pattern.length)
  })

  it("takes a socket's 'data' chunks the same way when the connector ignored onread", async () => {
    const e = await ends(1024 * 1024)
    const relay = new DownloadRelay()
    const client = net.connect(e.sink, '127.0.0.1')
    const upstream = net.connect(e.source, '127.0.0.1')
    closers.push(
      () => client.destroy(),
      () => upstream.destroy(),
    )
    await Promise.all([new Promise((r) => client.once('connect', r)), new Promise((r) => upstream.once('connect', r))])
    relay.start(client, upstream)
    upstream.once('close', () => client.end())
    await e.sinkEnded
    expect(Buffer.concat(e.received).equals(e.pattern)).toBe(true)
  })

  it('forwards nothing to a client that is gone, and stops reading', async () => {
    const e = await ends(4 * 1024 * 1024)
    const relay = new DownloadRelay()
    const client = net.connect(e.sink, '127.0.0.1')
    await new Promise((r) => client.once('connect', r))
    client.destroy()
    const upstream = net.connect({ port: e.source, host: '127.0.0.1', onread: relay.onread })
    closers.push(() => upstream.destroy())
    relay.start(client, upstream)
    await new Promise((r) => setTimeout(r, 200))
    // Reading paused after the first chunk: far less than the whole stream was read.
    expect(upstream.bytesRead).toBeLessThan(4 * 1024 * 1024)
  })
})
