// The host of the network allow-list tests (test/escape/network/allow-list/attacks.test.ts and
// test/e2e/sandbox/network-allow-list.test.ts), run as root or as uid 65534 through run-as.ts: starts
// the stand-in hosts (test/support/network/stand-in-hosts.ts), a proxy whose resolver and connector
// are theirs, and a sandbox pinned to one backend (or none: the unconfined control); runs each
// command through the executor and prints, as JSON, every result with its sandbox facts, the names
// the resolver was asked, the requests the servers saw, and what the raw listener and UDP sink got.
// argv: <json HostInput>.
import type { NetworkPolicy, SandboxMode } from '../../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { NetworkProxy } from '../../../../src/sandbox/network/proxy.js'
import type { SandboxBackendName } from '../../../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../../../src/shell/executor.js'
import { startStandInHosts } from '../../../support/network/stand-in-hosts.js'

interface HostInput {
  backend: SandboxBackendName | 'none'
  resident: boolean
  mode: SandboxMode
  network: NetworkPolicy
  root: string
  files?: string
  /** Commands by id; `${RAW}`, `${UDP}`, `${HOST}` in them (and in the lists) become the raw port, UDP port and host address. */
  commands: Record<string, string>
}

const input = JSON.parse(process.argv[2] ?? '{}') as HostInput
const hosts = await startStandInHosts(input.files)
const fill = (text: string) =>
  text
    .replaceAll('${RAW}', String(hosts.raw.port))
    .replaceAll('${UDP}', String(hosts.udp.port))
    .replaceAll('${HOST}', hosts.hostAddress ?? '192.0.2.1')
const network: NetworkPolicy =
  typeof input.network === 'object'
    ? { allow: input.network.allow.map(fill), ...(input.network.deny ? { deny: input.network.deny.map(fill) } : {}) }
    : input.network
const proxy = new NetworkProxy({ resolve: (h) => hosts.resolve(h), connect: (a, p) => hosts.connect(a, p) })
const sandbox =
  input.backend === 'none'
    ? undefined
    : await LocalSandbox.create({ backends: [input.backend], networkProxy: proxy, residentInstances: input.resident })
const executor = new LocalShellExecutor(sandbox ? { sandbox } : {})
const results: Record<string, unknown> = {}
for (const [id, template] of Object.entries(input.commands)) {
  const command = fill(template)
  const started = performance.now()
  try {
    const r = await executor.run({
      command,
      workdir: input.root,
      timeoutMs: 120_000,
      stdoutMaxBytes: 1 << 20,
      sandboxPolicy: input.backend === 'none' ? undefined : { mode: input.mode, workspaceRoot: input.root, network },
    })
    results[id] = {
      exitCode: r.exitCode,
      stdout: r.stdout.text,
      stderr: r.stderr.text,
      sandbox: r.sandbox,
      ms: Math.round(performance.now() - started),
    }
  } catch (error) {
    const e = error as { code?: string; message?: string }
    results[id] = { error: { code: e.code, message: e.message } }
  }
}
// A datagram or a raw connection still in flight has a moment to land.
await new Promise((r) => setTimeout(r, 200))
const out = { results, asked: hosts.asked, requests: hosts.requests, tls: hosts.tls, raw: hosts.raw, udp: hosts.udp }
await executor.dispose()
await sandbox?.dispose()
await proxy.close()
await hosts.close()
process.stdout.write(JSON.stringify(out), () => process.exit(0))
