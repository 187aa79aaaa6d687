// The host of test/escape/network/allow-list/second-pass.test.ts, run as root or as uid 65534 through
// run-as.ts: the stand-in hosts of test/support/network/stand-in-hosts.ts plus a few upstreams of
// its own (an address anywhere, an HTTP server that answers a malformed status line, a server that
// speaks first, a TLS server that records the server name it was asked for), a proxy whose resolver
// knows the stand-in names and hands every other name to the host's real resolver (the proxy's
// own systemResolve, as in production), and a sandbox pinned to one backend. Runs each command
// through the executor and prints, as JSON, every result with its sandbox facts, the names the
// resolver was asked, what the upstreams saw and how many descriptors the host held.
// argv: <json HostInput>.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import type { NetworkPolicy, SandboxMode } from '../../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { systemResolve } from '../../../../src/sandbox/network/destination.js'
import { NetworkProxy } from '../../../../src/sandbox/network/proxy.js'
import type { SandboxBackendName } from '../../../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../../../src/shell/executor.js'
import { STAND_IN, startStandInHosts } from '../../../support/network/stand-in-hosts.js'
import { EXTRA, STREAM_BYTES } from './stand-ins.js'

interface HostInput {
  backend: SandboxBackendName
  resident: boolean
  mode: SandboxMode
  network: NetworkPolicy
  root: string
  commands: Record<string, string>
}

const input = JSON.parse(process.argv[2] ?? '{}') as HostInput
const hosts = await startStandInHosts()

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  )
}

// 198.51.100.77: any address at all; counts who got there.
const anywhere = { accepted: 0 }
const anywhereServer = net.createServer((s) => {
  anywhere.accepted++
  s.on('error', () => {})
  s.end('reached\n')
})
const anywherePort = await listen(anywhereServer)

// weird.test: an HTTP/1.1 server an allowed name leads to; /status-099 answers a status code node's
// own parser accepts (three digits) but that ServerResponse.writeHead refuses (< 100).
const weirdServer = net.createServer((s) => {
  s.on('error', () => {})
  let head = ''
  s.on('data', (d: Buffer) => {
    head += d.toString('latin1')
    if (!head.includes('\r\n\r\n')) return
    const target = head.split(' ')[1] ?? ''
    if (target.endsWith('/status-099')) s.end('HTTP/1.1 099 Weird\r\nContent-Length: 4\r\n\r\nbad\n')
    else if (target.endsWith('/reason-ctl')) s.end('HTTP/1.1 200 O\x01K\r\nContent-Length: 4\r\n\r\nbad\n')
    else s.end('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n')
  })
})
const weirdPort = await listen(weirdServer)

// stream.test: speaks first, STREAM_BYTES unasked, then ends.
const streamServer = net.createServer((s) => {
  s.on('error', () => {})
  s.end(Buffer.alloc(STREAM_BYTES, 0x62))
})
const streamPort = await listen(streamServer)

// tls.test: a TLS server that records the server name each handshake asked for.
const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-attacks-2-'))
execFileSync(
  'openssl',
  ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=tls.test'].concat([
    '-keyout',
    path.join(certDir, 'key.pem'),
    '-out',
    path.join(certDir, 'cert.pem'),
  ]),
  { stdio: 'ignore' },
)
const serverNames: string[] = []
const tlsServer = tls.createServer(
  { key: fs.readFileSync(path.join(certDir, 'key.pem')), cert: fs.readFileSync(path.join(certDir, 'cert.pem')) },
  (s) => {
    serverNames.push(String((s as tls.TLSSocket & { servername?: string | false }).servername))
    s.on('error', () => {})
    s.end('tls-ok\n')
  },
)
tlsServer.on('tlsClientError', () => {})
const tlsPort = await listen(tlsServer)
fs.rmSync(certDir, { recursive: true, force: true })

const extraNames = new Map<string, string>([
  [EXTRA.weird.name, EXTRA.weird.address],
  [EXTRA.stream.name, EXTRA.stream.address],
  [EXTRA.tls.name, EXTRA.tls.address],
])
const standInNames = new Set<string>(Object.values(STAND_IN).map((h) => h.name))
/** Every name the resolver was asked (JSON-escaped by the report, so a NUL shows as \u0000). */
const asked: string[] = []

const proxy = new NetworkProxy({
  async resolve(host) {
    asked.push(host)
    const extra = extraNames.get(host.toLowerCase())
    if (extra !== undefined) return [extra]
    if (standInNames.has(host.toLowerCase())) return hosts.resolve(host)
    // Any other name: the host's own resolver, exactly as the proxy uses it without a test resolver.
    return systemResolve(host)
  },
  connect(address, port) {
    if (address === EXTRA.anywhere.address) return net.connect(anywherePort, '127.0.0.1')
    if (address === EXTRA.weird.address) return net.connect(weirdPort, '127.0.0.1')
    if (address === EXTRA.stream.address) return net.connect(streamPort, '127.0.0.1')
    if (address === EXTRA.tls.address) return net.connect(tlsPort, '127.0.0.1')
    return hosts.connect(address, port)
  },
})

/** How many descriptors this process holds now. */
function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length
}

const sandbox = await LocalSandbox.create({
  backends: [input.backend],
  networkProxy: proxy,
  residentInstances: input.resident,
})
const executor = new LocalShellExecutor({ sandbox })
const results: Record<string, unknown> = {}
for (const [id, command] of Object.entries(input.commands)) {
  const before = openFds()
  let most = before
  const sampler = setInterval(() => {
    most = Math.max(most, openFds())
  }, 20)
  const started = performance.now()
  try {
    const r = await executor.run({
      command,
      workdir: input.root,
      timeoutMs: 120_000,
      stdoutMaxBytes: 1 << 20,
      sandboxPolicy: { mode: input.mode, workspaceRoot: input.root, network: input.network },
    })
    results[id] = {
      exitCode: r.exitCode,
      stdout: r.stdout.text,
      stderr: r.stderr.text,
      sandbox: r.sandbox,
      ms: Math.round(performance.now() - started),
      fds: { before, most, after: openFds() },
    }
  } catch (error) {
    const e = error as { code?: string; message?: string }
    results[id] = { error: { code: e.code, message: e.message } }
  } finally {
    clearInterval(sampler)
  }
}
await new Promise((r) => setTimeout(r, 200))
const out = { results, asked, anywhere, serverNames }
await executor.dispose()
await sandbox.dispose()
await proxy.close()
await hosts.close()
for (const s of [anywhereServer, weirdServer, streamServer, tlsServer]) s.close()
process.stdout.write(JSON.stringify(out), () => process.exit(0))
