/**
 * Named hosts for network allow-list tests without the internet: an HTTP and an HTTPS server on
 * loopback stand in for names the proxy's test resolver maps to documentation addresses
 * (198.51.100.x), and its test connector maps those addresses to the servers. Names that resolve
 * to loopback, link-local and private addresses are there too (the proxy must refuse them), and
 * a raw TCP listener and a UDP sink on every host address record what a command reached without
 * the proxy. Given to the proxy only through its constructor (src/sandbox/network/proxy.ts).
 */
import dgram from 'node:dgram'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { selfSignedCert } from './certificate.js'

/** The names the test resolver knows, and where each stands. */
export const STAND_IN = {
  allowed: { name: 'allowed.test', address: '198.51.100.10' },
  other: { name: 'other.test', address: '198.51.100.11' },
  wild: { name: 'pkg.wild.test', address: '198.51.100.12' },
  wildOther: { name: 'cdn.wild.test', address: '198.51.100.12' },
  loopback: { name: 'loop.test', address: '127.0.0.1' },
  metadata: { name: 'meta.test', address: '169.254.169.254' },
  private: { name: 'private.test', address: '10.1.2.3' },
} as const

/** What a test reads back of the stand-ins. */
export interface StandInHosts {
  /** The proxy's test resolver (records every name asked). */
  resolve(host: string): Promise<string[]>
  /** The proxy's test connector: stand-in addresses to the loopback servers, anything else as asked. */
  connect(address: string, port: number): net.Socket
  /** Every name the resolver was asked, in order. */
  readonly asked: string[]
  /** Requests each server saw (`HOST PATH`). */
  readonly requests: string[]
  /** TLS handshakes the HTTPS server completed. */
  readonly tls: { handshakes: number }
  /** The raw TCP listener (every address of the host) and the connections it accepted. */
  readonly raw: { port: number; accepted: number }
  /** The UDP sink (every address of the host) and the datagrams it received. */
  readonly udp: { port: number; received: number }
  /** The host's own non-loopback IPv4 address (a raw connect's target), if it has one. */
  readonly hostAddress: string | undefined
  /** Files the HTTP server serves under `/files/` (npm registry, git repo, pip index), rooted here. */
  readonly filesDir: string
  close(): Promise<void>
}

function listen(server: net.Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as net.AddressInfo).port)))
}

/** Starts the stand-in servers (files served from `filesDir`, made here when not given). */
export async function startStandInHosts(filesDir?: string): Promise<StandInHosts> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-stand-in-'))
  const files = filesDir ?? path.join(dir, 'files')
  fs.mkdirSync(files, { recursive: true })
  const asked: string[] = []
  const requests: string[] = []
  const handler = (name: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push(`${req.headers.host ?? name} ${req.url}`)
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/hello') return void res.end(`hello from ${req.headers.host}\n`)
    if (url.pathname === '/bytes') {
      const n = Number(url.searchParams.get('n') ?? '0')
      res.setHeader('content-length', String(n))
      const chunk = Buffer.alloc(64 * 1024, 0x61)
      let left = n
      const pump = () => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left)
          left -= piece.length
          if (!res.write(piece)) return void res.once('drain', pump)
        }
        res.end()
      }
      return pump()
    }
    if (url.pathname.startsWith('/files/')) {
      let file = path.join(files, decodeURIComponent(url.pathname.slice('/files/'.length)))
      // A directory is its index.html (pip's "simple" pages).
      if (file.startsWith(files) && fs.existsSync(file) && fs.statSync(file).isDirectory())
        file = path.join(file, 'index.html')
      if (file.startsWith(files) && fs.existsSync(file) && fs.statSync(file).isFile()) {
        if (file.endsWith('.html')) res.setHeader('content-type', 'text/html')
        return void fs.createReadStream(file).pipe(res)
      }
    }
    res.statusCode = 404
    res.end('not found\n')
  }
  const plain = http.createServer(handler('http'))
  const tls = https.createServer(await selfSignedCert(Object.values(STAND_IN).map((h) => h.name)), handler('https'))
  const handshakes = { handshakes: 0 }
  tls.on('secureConnection', () => handshakes.handshakes++)
  const httpPort = await listen(plain, '127.0.0.1')
  const httpsPort = await listen(tls, '127.0.0.1')
  const raw = { port: 0, accepted: 0 }
  const rawServer = net.createServer((s) => {
    raw.accepted++
    s.on('error', () => {}) // a client that reads three bytes and goes resets us
    s.end('raw\n')
  })
  raw.port = await listen(rawServer, '0.0.0.0')
  const udp = { port: 0, received: 0 }
  const sink = dgram.createSocket('udp4')
  sink.on('message', () => udp.received++)
  udp.port = await new Promise<number>((r) => sink.bind(0, '0.0.0.0', () => r(sink.address().port)))
  const addresses = new Map<string, string>(Object.values(STAND_IN).map((h) => [h.name, h.address]))
  const standIns = new Set(['198.51.100.10', '198.51.100.11', '198.51.100.12'])
  const hostAddress = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address
  return {
    asked,
    requests,
    tls: handshakes,
    raw,
    udp,
    hostAddress,
    filesDir: files,
    async resolve(host) {
      asked.push(host)
      const address = addresses.get(host.toLowerCase())
      if (address === undefined) throw Object.assign(new Error(`stand-in: no such host ${host}`), { code: 'ENOTFOUND' })
      return [address]
    },
    connect(address, port) {
      if (standIns.has(address)) return net.connect(port === 443 ? httpsPort : httpPort, '127.0.0.1')
      return net.connect(port, address)
    },
    async close() {
      plain.closeAllConnections()
      tls.closeAllConnections()
      for (const s of [plain, tls, rawServer]) s.close()
      sink.close()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
