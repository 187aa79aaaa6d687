/**
 * src/sandbox/network/fact-ledger.ts: refusals counted per host, port and reason; connections
 * and their bytes per host:port, read from real loopback sockets (live while open, folded in
 * once closed, never twice); each list capped at NETWORK_FACTS_CAP with the rest counted.
 */
import { connect as netConnect, createServer, type Server, Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { NETWORK_FACTS_CAP } from '../../../../src/policy/network/facts.js'
import { FactLedger } from '../../../../src/sandbox/network/fact-ledger.js'
import { close, listen, portOf, readBytes } from './fixtures.js'

/** What the server end of each connection received, and a way to make it answer. */
interface Far {
  received: number
  socket: Socket
}

let server: Server
const fars: Far[] = []

beforeAll(async () => {
  server = await listen(
    createServer((socket) => {
      const far: Far = { received: 0, socket }
      fars.push(far)
      socket.on('error', () => {})
      socket.on('data', (chunk: Buffer) => {
        far.received += chunk.length
      })
    }),
  )
})

afterAll(() => close(server))

/** A connected loopback socket and the server's end of it. */
async function pair(): Promise<{ near: Socket; far: Far }> {
  const before = fars.length
  const near = netConnect(portOf(server), '127.0.0.1')
  near.on('error', () => {})
  await new Promise((resolve) => near.once('connect', resolve))
  await vi.waitFor(() => expect(fars.length).toBeGreaterThan(before))
  return { near, far: fars[before]! }
}

/** Sends `sent` bytes up and `received` bytes down over `p`, and waits until both arrived. */
async function exchange(p: { near: Socket; far: Far }, sent: number, received: number): Promise<void> {
  const target = p.far.received + sent
  const down = readBytes(p.near, received)
  p.near.write(Buffer.alloc(sent, 1))
  p.far.socket.write(Buffer.alloc(received, 2))
  await down
  await vi.waitFor(() => expect(p.far.received).toBe(target))
}

/** Closes `socket` and waits for its 'close'. */
async function closed(socket: Socket): Promise<void> {
  const done = new Promise((resolve) => socket.once('close', resolve))
  socket.destroy()
  await done
}

describe('NETWORK_FACTS_CAP', () => {
  it('is the 32 entries the facts promise', () => {
    expect(NETWORK_FACTS_CAP).toBe(32)
  })
})

describe('refusals', () => {
  it('keeps one entry per host, port and reason, in first-seen order, counting repeats', () => {
    const ledger = new FactLedger()
    ledger.refuse('a.test', 443, 'not-allowed')
    ledger.refuse('a.test', 443, 'not-allowed')
    ledger.refuse('a.test', 80, 'not-allowed')
    ledger.refuse('a.test', 443, 'denied')
    ledger.refuse('b.test', 443, 'not-allowed')
    ledger.refuse('a.test', 443, 'not-allowed')
    expect(ledger.snapshot()).toEqual({
      refused: [
        { host: 'a.test', port: 443, count: 3, reason: 'not-allowed' },
        { host: 'a.test', port: 80, count: 1, reason: 'not-allowed' },
        { host: 'a.test', port: 443, count: 1, reason: 'denied' },
        { host: 'b.test', port: 443, count: 1, reason: 'not-allowed' },
      ],
      allowed: [],
    })
  })

  it('keeps at most NETWORK_FACTS_CAP entries and counts each further refusal as omitted', () => {
    const ledger = new FactLedger()
    for (let i = 0; i < NETWORK_FACTS_CAP; i++) ledger.refuse(`h${i}.test`, 80, 'not-allowed')
    expect(ledger.snapshot().refused).toHaveLength(NETWORK_FACTS_CAP)
    expect('refusedOmitted' in ledger.snapshot()).toBe(false)
    ledger.refuse('over.test', 80, 'not-allowed')
    ledger.refuse('over.test', 80, 'not-allowed')
    ledger.refuse('h0.test', 80, 'denied')
    // An entry already kept still counts its repeats past the cap.
    ledger.refuse('h0.test', 80, 'not-allowed')
    const facts = ledger.snapshot()
    expect(facts.refused).toHaveLength(NETWORK_FACTS_CAP)
    expect(facts.refused[0]).toEqual({ host: 'h0.test', port: 80, count: 2, reason: 'not-allowed' })
    expect(facts.refused.some((e) => e.host === 'over.test' || e.reason === 'denied')).toBe(false)
    expect(facts.refusedOmitted).toBe(3)
    expect('allowedOmitted' in facts).toBe(false)
  })
})

describe('connections', () => {
  it('counts connections per host:port and reads each open socket’s bytes live', async () => {
    const ledger = new FactLedger()
    const one = await pair()
    const two = await pair()
    const other = await pair()
    ledger.connection('a.test', 443, one.near)
    ledger.connection('a.test', 443, two.near)
    ledger.connection('a.test', 80, other.near)
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'a.test', port: 443, connections: 2, bytesSent: 0, bytesReceived: 0 },
      { host: 'a.test', port: 80, connections: 1, bytesSent: 0, bytesReceived: 0 },
    ])
    await exchange(one, 100, 7)
    await exchange(two, 20, 3000)
    await exchange(other, 5, 1)
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'a.test', port: 443, connections: 2, bytesSent: 120, bytesReceived: 3007 },
      { host: 'a.test', port: 80, connections: 1, bytesSent: 5, bytesReceived: 1 },
    ])
    for (const p of [one, two, other]) await closed(p.near)
  })

  it('folds a closed socket’s final counts into its entry once, and keeps counting the open ones', async () => {
    const ledger = new FactLedger()
    const first = await pair()
    const second = await pair()
    ledger.connection('b.test', 443, first.near)
    ledger.connection('b.test', 443, second.near)
    await exchange(first, 10, 20)
    await exchange(second, 1, 2)
    await closed(first.near)
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'b.test', port: 443, connections: 2, bytesSent: 11, bytesReceived: 22 },
    ])
    await exchange(second, 4, 8)
    await closed(second.near)
    const final = ledger.snapshot()
    expect(final.allowed).toEqual([{ host: 'b.test', port: 443, connections: 2, bytesSent: 15, bytesReceived: 30 }])
    // Closed sockets are no longer read: a later snapshot is the same, not doubled.
    expect(ledger.snapshot()).toEqual(final)
  })

  it('counts the bytes as the far end saw them', async () => {
    const ledger = new FactLedger()
    const p = await pair()
    ledger.connection('c.test', 8080, p.near)
    await exchange(p, 4096, 65_536)
    await closed(p.near)
    expect(ledger.snapshot().allowed).toEqual([
      { host: 'c.test', port: 8080, connections: 1, bytesSent: p.far.received, bytesReceived: 65_536 },
    ])
    expect(p.far.received).toBe(4096)
  })

  it('keeps at most NETWORK_FACTS_CAP entries and counts each further connection as omitted', async () => {
    const ledger = new FactLedger()
    // Real sockets, never connected: their counters stay at zero.
    const sockets = Array.from({ length: NETWORK_FACTS_CAP + 3 }, () => new Socket())
    for (let i = 0; i < NETWORK_FACTS_CAP; i++) ledger.connection(`h${i}.test`, 443, sockets[i]!)
    expect(ledger.snapshot().allowed).toHaveLength(NETWORK_FACTS_CAP)
    expect('allowedOmitted' in ledger.snapshot()).toBe(false)
    ledger.connection('over.test', 443, sockets[NETWORK_FACTS_CAP]!)
    ledger.connection('h0.test', 80, sockets[NETWORK_FACTS_CAP + 1]!)
    // An entry already kept still counts its connections past the cap.
    ledger.connection('h0.test', 443, sockets[NETWORK_FACTS_CAP + 2]!)
    const facts = ledger.snapshot()
    expect(facts.allowed).toHaveLength(NETWORK_FACTS_CAP)
    expect(facts.allowed[0]).toEqual({ host: 'h0.test', port: 443, connections: 2, bytesSent: 0, bytesReceived: 0 })
    expect(facts.allowed.some((e) => e.host === 'over.test' || e.port === 80)).toBe(false)
    expect(facts.allowedOmitted).toBe(2)
    expect('refusedOmitted' in facts).toBe(false)
    for (const socket of sockets) socket.destroy()
  })

  it('does not count the bytes of an omitted connection anywhere', async () => {
    const ledger = new FactLedger()
    const idle = Array.from({ length: NETWORK_FACTS_CAP }, () => new Socket())
    for (const [i, socket] of idle.entries()) ledger.connection(`h${i}.test`, 443, socket)
    const p = await pair()
    ledger.connection('over.test', 443, p.near)
    await exchange(p, 50, 60)
    await closed(p.near)
    const facts = ledger.snapshot()
    expect(facts.allowedOmitted).toBe(1)
    expect(facts.allowed.reduce((n, e) => n + e.bytesSent + e.bytesReceived, 0)).toBe(0)
    for (const socket of idle) socket.destroy()
  })
})

describe('snapshot', () => {
  it('returns a copy: changing it changes neither the ledger nor a later snapshot', async () => {
    const ledger = new FactLedger()
    ledger.refuse('r.test', 1, 'denied')
    const p = await pair()
    ledger.connection('o.test', 2, p.near)
    const open = ledger.snapshot()
    open.refused[0]!.count = 99
    open.allowed[0]!.connections = 99
    open.refused.push({ host: 'x', port: 3, count: 1, reason: 'address' })
    await exchange(p, 3, 4)
    await closed(p.near)
    const done = ledger.snapshot()
    done.allowed[0]!.bytesSent = 99
    expect(ledger.snapshot()).toEqual({
      refused: [{ host: 'r.test', port: 1, count: 1, reason: 'denied' }],
      allowed: [{ host: 'o.test', port: 2, connections: 1, bytesSent: 3, bytesReceived: 4 }],
    })
  })
})
