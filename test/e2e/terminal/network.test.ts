// A network allow-list in a confined terminal (node-pty, real kernel, real bwrap): the launcher
// hands its listener over a socket it inherited, the sandbox's proxy serves the session, and the
// terminal's handle carries the facts once the session is gone. The listed stand-in host is
// reached, another name is refused and reported, and a raw connect to the host's address fails,
// while the same connect from an unconfined terminal reaches it (the control).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { NetworkProxy } from '../../../src/sandbox/network/proxy.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { STAND_IN, type StandInHosts, startStandInHosts } from '../../support/network/stand-in-hosts.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-net-term') })
let hosts: StandInHosts
beforeAll(async () => {
  hosts = await startStandInHosts()
})
afterAll(async () => {
  await runtime.dispose()
  await hosts.close()
})

/** Runs `script` in a terminal confined by `backend` (or none) and returns its screen and handle. */
async function inTerminal(backend: SandboxBackendName | 'none', script: string) {
  const proxy = new NetworkProxy({ resolve: (h) => hosts.resolve(h), connect: (a, p) => hosts.connect(a, p) })
  const sandbox = await LocalSandbox.create({
    backends: backend === 'none' ? ['landlock'] : [backend],
    networkProxy: proxy,
  })
  try {
    const root = scratchDir('cordon-net-term-root')
    const policy =
      backend === 'none'
        ? ({ mode: 'danger-full-access', workspaceRoot: root } as const)
        : ({ mode: 'read-only', workspaceRoot: root, network: { allow: [STAND_IN.allowed.name] } } as const)
    const confined = sandbox.confineTerminal(
      { argv: ['bash', '-c', script], cwd: root, cols: 120, rows: 40, graceMs: 1000 },
      policy,
    )
    const terminal = await runtime.spawnTerminal(confined.spec)
    let screen = ''
    terminal.onData((text) => {
      screen += text
    })
    await terminal.done
    await terminal.terminate()
    return { screen, terminal }
  } finally {
    await sandbox.dispose()
    await proxy.close()
  }
}

const RAW = () => `exec 3<>/dev/tcp/${hosts.hostAddress}/${hosts.raw.port} && echo RAW-REACHED || echo RAW-FAILED`

describe('network allow-lists in confined terminals', () => {
  it('control: an unconfined terminal reaches the host address', async () => {
    const before = hosts.raw.accepted
    const { screen } = await inTerminal('none', RAW())
    expect(screen).toContain('RAW-REACHED')
    expect(hosts.raw.accepted).toBe(before + 1)
  })

  for (const backend of ['landlock', 'bubblewrap'] as const) {
    it(`${backend}: the listed host through the proxy, the rest refused and reported, no route past it`, async (ctx) => {
      await needBackend(ctx, backend)
      const before = hosts.raw.accepted
      const script = [
        `curl -sS -f -m 10 http://${STAND_IN.allowed.name}/hello`,
        `curl -sS -f -m 10 http://${STAND_IN.other.name}/hello || echo REFUSED-$?`,
        RAW(),
      ].join('; ')
      const { screen, terminal } = await inTerminal(backend, script)
      expect(screen).toContain(`hello from ${STAND_IN.allowed.name}`)
      expect(screen).toMatch(/REFUSED-\d+/)
      expect(screen).toContain('RAW-FAILED')
      expect(hosts.raw.accepted).toBe(before)
      expect(terminal.network?.refused).toEqual([
        { host: STAND_IN.other.name, port: 80, count: 1, reason: 'not-allowed' },
      ])
      expect(terminal.network?.allowed.map((a) => `${a.host}:${a.port}`)).toEqual([`${STAND_IN.allowed.name}:80`])
    }, 120_000)
  }
})
