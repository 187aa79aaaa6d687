/**
 * The proxy tests' world: origins behind counting relays, a resolver and connector that map
 * the test names to them (with spies), and proxies attached to loopback listeners.
 */
import { request } from 'node:http'
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { NetworkAllowList } from '../../../../src/policy/vocabulary.js'
import { NetworkProxy, type NetworkProxyOptions, type ProxiedRun } from '../../../../src/sandbox/network/proxy.js'
import {
  close,
  curl,
  listen,
  portOf,
  rawConnect,
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
export const NAMES: Record<string, string[]> = {
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

export const httpSeen: SeenRequest[] = []
export const httpsSeen: SeenRequest[] = []
const servers: Server[] = []
export let httpRelay: { server: Server; connections: RelayedConnection[] }
export let httpsRelay: { server: Server; connections: RelayedConnection[] }
let deadPort: number

/** The test's resolver (with a spy on every name asked) and connector (stand-in address → loopback relay). */
export function testNetwork() {
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
export async function proxied(list: NetworkAllowList, extra: Partial<NetworkProxyOptions> = {}) {
  const network = testNetwork()
  const proxy = new NetworkProxy({ ...network.options, ...extra })
  const listener = await listen(createServer())
  open.push({ proxy, listener })
  const run: ProxiedRun = proxy.attach(listener, list)
  return { ...network, proxy, listener, run, port: portOf(listener) }
}

/** curl through the proxy's HTTP face, printing the status code last. */
export function viaHttpProxy(port: number, args: string[], input?: string) {
  return curl(['-x', `http://127.0.0.1:${port}`, '-w', '\n%{http_code} %{http_connect}', ...args], input)
}

/** The newest relay connection's counts once it has closed. */
export async function lastRelayed(relay: { connections: RelayedConnection[] }) {
  const last = relay.connections.at(-1)!
  await last.closed
  return last
}

/** Registers the origins' start and stop, and each test's proxy clean-up, in the calling test file. */
export function useOrigins(): void {
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
  afterEach(async () => {
    for (const { proxy } of open.splice(0)) await proxy.close()
  })
}

/** A CONNECT through the proxy with node:http: the status and, on 200, the tunnel's socket. */
export function connectTunnel(port: number, target: string): Promise<{ status: number; socket: Socket; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'CONNECT', path: target })
    req.on('connect', (res, socket, head) => resolve({ status: res.statusCode!, socket, head }))
    req.on('error', reject)
    req.end()
  })
}

/** A raw SOCKS5 CONNECT: the greeting's method, the reply code, and the socket. */
export async function socksConnect(port: number, address: Buffer, destPort: number) {
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

/** A SOCKS5 domain-name address. */
export const domain = (name: string) => Buffer.concat([Buffer.from([3, name.length]), Buffer.from(name)])
