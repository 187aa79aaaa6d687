/**
 * The decision order of src/sandbox/network/destination.ts, driven directly: the allow-list
 * (a refused name is never resolved), the name's addresses (an IP literal is not resolved;
 * refused ranges are filtered out; none left is an 'address' refusal), then TCP connections
 * to checked addresses only. The connector maps stand-in addresses to real loopback servers.
 */
import { connect as netConnect, createServer, type Server, Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { compileAllowList } from '../../../../src/policy/network/allow-list.js'
import type { NetworkAllowList } from '../../../../src/policy/vocabulary.js'
import {
  type Connector,
  type Reach,
  type Resolver,
  type RunScope,
  reach,
  refuse,
  systemConnect,
  systemResolve,
} from '../../../../src/sandbox/network/destination.js'
import { FactLedger } from '../../../../src/sandbox/network/fact-ledger.js'
import { close, listen, portOf, readBytes } from './fixtures.js'

// Stand-in public addresses (documentation ranges, which the address policy does not refuse).
const LIVE = '198.51.100.1'
const LIVE_TOO = '198.51.100.2'
const DEAD = '198.51.100.9'

let echo: Server
let deadPort: number
/** Every connection the echo server accepted. */
const accepted: Socket[] = []

beforeAll(async () => {
  echo = await listen(
    createServer((socket) => {
      accepted.push(socket)
      socket.on('error', () => {})
      socket.pipe(socket)
    }),
  )
  const dead = await listen(createServer())
  deadPort = portOf(dead)
  await close(dead)
})

afterAll(() => close(echo))

/** A run scope over `list` whose resolver answers from `names` (a spy) and whose connector maps stand-ins to loopback. */
function world(list: NetworkAllowList, names: Record<string, string[]> = {}, connector?: Connector) {
  const resolve = vi.fn<Resolver>(async (host) => {
    const addresses = names[host]
    if (!addresses) throw new Error(`ENOTFOUND ${host}`)
    return addresses
  })
  const connected: string[] = []
  const tracked: Socket[] = []
  let done = false
  const route: Connector = (address, port) => {
    if (address === LIVE || address === LIVE_TOO) return netConnect(portOf(echo), '127.0.0.1')
    if (address === DEAD) return netConnect(deadPort, '127.0.0.1')
    return netConnect(port, address)
  }
  const ledger = new FactLedger()
  const scope: RunScope = {
    list: compileAllowList(list),
    ledger,
    resolve,
    connect: (address, port) => {
      connected.push(`${address}:${port}`)
      return (connector ?? route)(address, port)
    },
    track: (socket) => {
      tracked.push(socket)
      socket.on('error', () => socket.destroy())
    },
    finished: () => done,
  }
  return {
    scope,
    resolve,
    connected,
    tracked,
    ledger,
    finish: () => {
      done = true
    },
  }
}

/** The socket of a connected reach (failing the test otherwise), destroyed when the test is done with it. */
function connectedSocket(result: Reach): Socket {
  expect(result.kind).toBe('connected')
  if (result.kind !== 'connected') throw new Error('unreachable')
  return result.socket
}

/** Whether `socket` carries bytes end to end (the echo server sends them back). */
async function echoes(socket: Socket, text: string): Promise<string> {
  const back = readBytes(socket, text.length)
  socket.write(text)
  return (await back).toString()
}

describe('reach: the allow-list comes first', () => {
  it('refuses a denied or unlisted name without resolving or connecting, and records the refusal', async () => {
    const { scope, resolve, connected, ledger } = world(
      { allow: ['*.example.test', 'ok.test:80'], deny: ['bad.example.test'] },
      { 'bad.example.test': [LIVE], 'other.test': [LIVE], 'ok.test': [LIVE] },
    )
    const denied = await reach(scope, 'bad.example.test', 443)
    expect(denied).toEqual({
      kind: 'refused',
      host: 'bad.example.test',
      reason: 'denied',
      message: "cordon: bad.example.test:443 is denied by this sandbox's network policy",
    })
    const unlisted = await reach(scope, 'other.test', 80)
    expect(unlisted).toEqual({
      kind: 'refused',
      host: 'other.test',
      reason: 'not-allowed',
      message: "cordon: other.test:80 is not in this sandbox's network allow-list",
    })
    // A listed name at a port the list does not name.
    expect(await reach(scope, 'ok.test', 8080)).toMatchObject({ kind: 'refused', reason: 'not-allowed' })
    expect(resolve).not.toHaveBeenCalled()
    expect(connected).toEqual([])
    expect(ledger.snapshot().refused).toEqual([
      { host: 'bad.example.test', port: 443, count: 1, reason: 'denied' },
      { host: 'other.test', port: 80, count: 1, reason: 'not-allowed' },
      { host: 'ok.test', port: 8080, count: 1, reason: 'not-allowed' },
    ])
    // Control: the same world resolves and connects a listed name.
    const ok = connectedSocket(await reach(scope, 'ok.test', 80))
    ok.destroy()
    expect(resolve.mock.calls).toEqual([['ok.test']])
  })

  it('records the refusal before it answers (synchronously, before the first await)', () => {
    const { scope, ledger } = world({ allow: ['ok.test'] })
    const pending = reach(scope, 'evil.test', 443)
    expect(ledger.snapshot().refused).toEqual([{ host: 'evil.test', port: 443, count: 1, reason: 'not-allowed' }])
    return pending
  })

  it('normalizes the host (case, trailing dot) before deciding, resolving and answering', async () => {
    const { scope, resolve } = world({ allow: ['ok.test'], deny: ['bad.test'] }, { 'ok.test': [LIVE] })
    expect(await reach(scope, 'BAD.Test.', 80)).toMatchObject({ kind: 'refused', host: 'bad.test', reason: 'denied' })
    const result = await reach(scope, 'OK.test.', 80)
    expect(result).toMatchObject({ kind: 'connected', host: 'ok.test' })
    connectedSocket(result).destroy()
    expect(resolve.mock.calls).toEqual([['ok.test']])
  })
  it('refuses what is not a host name or an address (a NUL, a space) without resolving it, recorded encoded', async () => {
    const { scope, resolve, connected, ledger } = world({ allow: ['ok.test', '*.ok.test'] }, { 'ok.test': [LIVE] })
    expect(await reach(scope, 'ok.test\u0000.evil.test', 80)).toMatchObject({
      kind: 'refused',
      host: 'invalid:ok.test%00.evil.test',
      reason: 'not-allowed',
    })
    expect(await reach(scope, 'a b.ok.test', 80)).toMatchObject({ kind: 'refused', reason: 'not-allowed' })
    expect(resolve).not.toHaveBeenCalled()
    expect(connected).toEqual([])
    expect(ledger.snapshot().refused.map((e) => e.host)).toEqual([
      'invalid:ok.test%00.evil.test',
      'invalid:a%20b.ok.test',
    ])
  })
})

describe('reach: the addresses of a listed name', () => {
  it('does not resolve an IP literal, and connects to it as given', async () => {
    const port = portOf(echo)
    const { scope, resolve, connected } = world({ allow: [`127.0.0.1:${port}`, LIVE] })
    const loop = connectedSocket(await reach(scope, '127.0.0.1', port))
    expect(await echoes(loop, 'literal')).toBe('literal')
    loop.destroy()
    const stand = connectedSocket(await reach(scope, LIVE, 8443))
    stand.destroy()
    expect(resolve).not.toHaveBeenCalled()
    expect(connected).toEqual([`127.0.0.1:${port}`, `${LIVE}:8443`])
  })

  it('connects only to the addresses that pass the range check, never to a refused one', async () => {
    const { scope, resolve, connected } = world(
      { allow: ['mixed.test'] },
      { 'mixed.test': ['10.0.0.1', '127.0.0.1', '169.254.169.254', LIVE, '::1', '::ffff:127.0.0.1'] },
    )
    const socket = connectedSocket(await reach(scope, 'mixed.test', 80))
    expect(await echoes(socket, 'checked')).toBe('checked')
    socket.destroy()
    expect(resolve).toHaveBeenCalledTimes(1)
    expect(connected).toEqual([`${LIVE}:80`])
  })

  it("refuses with reason 'address' when no address is left, naming why, and connects nowhere", async () => {
    const { scope, connected, ledger } = world(
      { allow: ['inside.test'] },
      { 'inside.test': ['127.0.0.1', '169.254.169.254', '10.1.2.3'] },
    )
    const result = await reach(scope, 'inside.test', 443)
    expect(result).toMatchObject({ kind: 'refused', host: 'inside.test', reason: 'address' })
    if (result.kind !== 'refused') throw new Error('not refused')
    expect(result.message).toBe(
      'cordon: inside.test:443 leads only to addresses this sandbox may not reach (' +
        '127.0.0.1 is a loopback address; ' +
        '169.254.169.254 is a link-local address (cloud metadata lives there); ' +
        '10.1.2.3 is a private-network address)',
    )
    expect(connected).toEqual([])
    expect(ledger.snapshot().refused).toEqual([{ host: 'inside.test', port: 443, count: 1, reason: 'address' }])
  })

  it("refuses with reason 'denied' a name that leads only to an address the deny list names", async () => {
    const { scope, connected, ledger } = world(
      { allow: ['*.cdn.test'], deny: [LIVE] },
      { 'a.cdn.test': [LIVE], 'b.cdn.test': [LIVE, LIVE_TOO] },
    )
    expect(await reach(scope, 'a.cdn.test', 443)).toMatchObject({ kind: 'refused', reason: 'denied' })
    expect(connected).toEqual([])
    // With another address left, the denied one is only skipped.
    connectedSocket(await reach(scope, 'b.cdn.test', 443)).destroy()
    expect(connected).toEqual([`${LIVE_TOO}:443`])
    expect(ledger.snapshot().refused).toEqual([{ host: 'a.cdn.test', port: 443, count: 1, reason: 'denied' }])
  })

  it('lets a loopback address through when the list names it literally', async () => {
    const port = portOf(echo)
    const { scope, connected } = world({ allow: ['local.test', `127.0.0.1:${port}`] }, { 'local.test': ['127.0.0.1'] })
    const socket = connectedSocket(await reach(scope, 'local.test', port))
    socket.destroy()
    expect(connected).toEqual([`127.0.0.1:${port}`])
    // At another port the literal does not cover it: refused by range.
    expect(await reach(scope, 'local.test', port + 1)).toMatchObject({ kind: 'refused', reason: 'address' })
  })
})

describe('reach: unreachable destinations', () => {
  it('answers a name that does not resolve as unreachable at resolve, refusing nothing', async () => {
    const { scope, connected, ledger } = world({ allow: ['gone.test'] })
    const result = await reach(scope, 'gone.test', 80)
    expect(result).toEqual({
      kind: 'unreachable',
      step: 'resolve',
      message: 'cordon: gone.test could not be resolved (Error: ENOTFOUND gone.test)',
    })
    expect(connected).toEqual([])
    expect(ledger.snapshot()).toEqual({ refused: [], allowed: [] })
  })

  it('answers a name with no addresses as unreachable at resolve, not as an address refusal', async () => {
    const { scope, connected, ledger } = world({ allow: ['empty.test'] }, { 'empty.test': [] })
    expect(await reach(scope, 'empty.test', 80)).toEqual({
      kind: 'unreachable',
      step: 'resolve',
      message: 'cordon: empty.test has no addresses',
    })
    expect(connected).toEqual([])
    expect(ledger.snapshot().refused).toEqual([])
  })

  it('tries the checked addresses in order and connects to the first that answers', async () => {
    const { scope, resolve, connected, tracked } = world(
      { allow: ['flaky.test'] },
      { 'flaky.test': [DEAD, LIVE_TOO, LIVE] },
    )
    const socket = connectedSocket(await reach(scope, 'flaky.test', 80))
    expect(await echoes(socket, 'second')).toBe('second')
    expect(connected).toEqual([`${DEAD}:80`, `${LIVE_TOO}:80`])
    // One resolution for all attempts: the connector only ever gets the checked addresses.
    expect(resolve).toHaveBeenCalledTimes(1)
    // Every attempt's socket is handed to the run, the failed one already destroyed.
    expect(tracked).toHaveLength(2)
    expect(tracked[0]!.destroyed).toBe(true)
    expect(tracked[1]).toBe(socket)
    // Connected, the socket keeps no connect timeout and no attempt's error handler (only the run's).
    expect(socket.timeout ?? 0).toBe(0)
    expect(socket.listenerCount('error')).toBe(1)
    expect(socket.listenerCount('timeout')).toBe(0)
    socket.destroy()
  })

  it('answers unreachable at connect when every address refuses, with the last error', async () => {
    const { scope, connected, ledger } = world({ allow: ['dead.test'] }, { 'dead.test': [DEAD, DEAD] })
    const result = await reach(scope, 'dead.test', 80)
    expect(result).toMatchObject({ kind: 'unreachable', step: 'connect' })
    if (result.kind !== 'unreachable') throw new Error('not unreachable')
    expect(result.message).toMatch(
      /^cordon: could not connect to dead\.test:80 \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/,
    )
    expect(connected).toEqual([`${DEAD}:80`, `${DEAD}:80`])
    expect(ledger.snapshot()).toEqual({ refused: [], allowed: [] })
  })

  it('takes a connector that throws as a failed attempt and goes on to the next address', async () => {
    const thrower: Connector = (address) => {
      if (address === LIVE_TOO) throw new Error('no route')
      return netConnect(portOf(echo), '127.0.0.1')
    }
    const { scope, connected } = world(
      { allow: ['two.test', 'one.test'] },
      { 'two.test': [LIVE_TOO, LIVE], 'one.test': [LIVE_TOO] },
      thrower,
    )
    const socket = connectedSocket(await reach(scope, 'two.test', 80))
    socket.destroy()
    expect(await reach(scope, 'one.test', 80)).toEqual({
      kind: 'unreachable',
      step: 'connect',
      message: 'cordon: could not connect to one.test:80 (no route)',
    })
    expect(connected).toEqual([`${LIVE_TOO}:80`, `${LIVE}:80`, `${LIVE_TOO}:80`])
  })

  it('gives up an attempt whose connection times out (15 s), destroying its socket', async () => {
    let pending: Socket | undefined
    // A real socket that never connects: its timeout is armed by reach and fired here.
    const silent: Connector = () => {
      pending = new Socket()
      return pending
    }
    const { scope } = world({ allow: ['slow.test'] }, { 'slow.test': [LIVE] }, silent)
    const result = reach(scope, 'slow.test', 80)
    await vi.waitFor(() => expect(pending?.timeout).toBe(15_000))
    pending!.emit('timeout')
    expect(await result).toEqual({
      kind: 'unreachable',
      step: 'connect',
      message: `cordon: could not connect to slow.test:80 (connecting to ${LIVE}:80 timed out)`,
    })
    expect(pending!.destroyed).toBe(true)
  })

  it('starts no connection once the run has finished', async () => {
    const { scope, connected, finish } = world({ allow: ['ok.test'] }, { 'ok.test': [LIVE] })
    finish()
    expect(await reach(scope, 'ok.test', 80)).toEqual({
      kind: 'unreachable',
      step: 'connect',
      message: 'cordon: could not connect to ok.test:80 (the run has finished)',
    })
    expect(connected).toEqual([])
  })

  it('destroys a connection that completes after the run has finished', async () => {
    let opened: Socket | undefined
    let finishRun = () => {}
    const finishing: Connector = () => {
      opened = netConnect(portOf(echo), '127.0.0.1')
      // The run ends while this connection is being made.
      finishRun()
      return opened
    }
    const before = accepted.length
    const w = world({ allow: ['late.test'] }, { 'late.test': [LIVE, LIVE_TOO] }, finishing)
    finishRun = w.finish
    expect(await reach(w.scope, 'late.test', 80)).toMatchObject({ kind: 'unreachable', step: 'connect' })
    expect(opened!.destroyed).toBe(true)
    // It connected (the server saw it), was not handed out, and no second address was tried.
    await vi.waitFor(() => expect(accepted.length).toBe(before + 1))
    expect(w.connected).toEqual([`${LIVE}:80`])
  })
})

describe('refuse', () => {
  it('records the refusal in the ledger and words each reason', () => {
    const { scope, ledger } = world({ allow: [] })
    expect(refuse(scope, 'a.test', 1, 'denied')).toEqual({
      kind: 'refused',
      host: 'a.test',
      reason: 'denied',
      message: "cordon: a.test:1 is denied by this sandbox's network policy",
    })
    expect(refuse(scope, 'a.test', 1, 'not-allowed')).toMatchObject({
      message: "cordon: a.test:1 is not in this sandbox's network allow-list",
    })
    expect(refuse(scope, 'a.test', 1, 'address', 'why')).toMatchObject({
      message: 'cordon: a.test:1 leads only to addresses this sandbox may not reach (why)',
    })
    expect(refuse(scope, 'front.test', 443, 'server-name')).toMatchObject({
      reason: 'server-name',
      message:
        "cordon: the TLS hello for front.test:443 names another server than the tunnel's host, or cannot be read whole",
    })
    expect(refuse(scope, 'a.test', 1, 'denied')).toMatchObject({ reason: 'denied' })
    expect(ledger.snapshot().refused).toEqual([
      { host: 'a.test', port: 1, count: 2, reason: 'denied' },
      { host: 'a.test', port: 1, count: 1, reason: 'not-allowed' },
      { host: 'a.test', port: 1, count: 1, reason: 'address' },
      { host: 'front.test', port: 443, count: 1, reason: 'server-name' },
    ])
  })
})

describe('the system resolver and connector', () => {
  it('systemResolve answers an address literal with itself and localhost with a loopback address', async () => {
    expect(await systemResolve('127.0.0.1')).toEqual(['127.0.0.1'])
    const local = await systemResolve('localhost')
    expect(local.length).toBeGreaterThan(0)
    expect(local.some((a) => a === '127.0.0.1' || a === '::1')).toBe(true)
  })

  it('systemConnect opens a plain TCP connection to an address', async () => {
    const socket = systemConnect('127.0.0.1', portOf(echo))
    socket.on('error', () => {})
    expect(await echoes(socket, 'system')).toBe('system')
    expect(socket.remotePort).toBe(portOf(echo))
    socket.destroy()
  })
})
