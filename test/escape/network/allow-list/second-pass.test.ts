// Attacks on a network allow-list, second round, each with its control. The command lives in a
// network namespace of its own whose only way out is the host's proxy (held: raw/packet sockets,
// ::1, other loopback addresses, unix sockets, setns, netlink; see the report). These go through
// the proxy and at the host behind it:
//  - a SOCKS5 domain name with a NUL in it: the list reads "198.51.100.77\0.allowed.test" (under
//    *.allowed.test), the host's resolver (getaddrinfo, a C string) reads "198.51.100.77": any
//    address at all is reached, and no fact records it (control: the address asked as it is is
//    refused);
//  - a ClientHello for another server split over two TLS records: the server-name check reads only
//    the first record and passes it (control: the same hello in one record is refused);
//  - a server that speaks first, a client that never sends: 4 MiB arrive and the facts count
//    nothing (control: the same with one byte sent first is counted);
//  - 1500 connections held at the proxy: the host holds a descriptor for each, without a cap
//    (control: 10 connections cost about 10);
//  - an allowed upstream answering a status line node's HTTP client parses but its server refuses to
//    write (`099`, or a reason phrase with a control character): the host process dies of an
//    uncaught exception (control: the same upstream's well-formed answer is forwarded).
// Landlock and bubblewrap (resident and a bwrap per run); as root and as uid 65534.
import path from 'node:path'
import fs from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import type { NetworkFacts } from '../../../../src/policy/network/facts.js'
import { needBackend, requireBackend } from '../../../support/sandbox/backends.js'
import type { AttackUser } from '../../attacks/attack.js'
import { runScriptAs, USERS } from '../../host/run-as.js'
import { COMMANDS } from './commands.js'
import { EXTRA, STREAM_BYTES } from './stand-ins.js'
import { scratchDirAs } from '../../../support/scratch.js'

const HOST = path.join(import.meta.dirname, 'proxy-host.ts')

const NETWORK = {
  allow: ['allowed.test', '*.allowed.test', '*.wild.test', EXTRA.weird.name, EXTRA.stream.name, EXTRA.tls.name],
}

interface Result {
  exitCode?: number | null
  stdout?: string
  stderr?: string
  sandbox?: { denied: boolean; deniedFor?: string[]; network?: NetworkFacts }
  fds?: { before: number; most: number; after: number }
  error?: { code?: string; message?: string }
}

interface Report {
  results: Record<string, Result>
  asked: string[]
  anywhere: { accepted: number }
  serverNames: string[]
}

/** Runs the host as `user` with `commands` (ids of COMMANDS); its exit, stderr and report (undefined when it printed none). */
async function runHost(
  user: AttackUser,
  config: { backend: 'landlock' | 'bubblewrap'; resident: boolean },
  ids: ReadonlyArray<keyof typeof COMMANDS>,
): Promise<{ code: number | null; stderr: string; report: Report | undefined }> {
  const root = scratchDirAs(user, 'cordon-attacks-2')
  try {
    const commands = Object.fromEntries(ids.map((id) => [id, COMMANDS[id]]))
    const input = { ...config, mode: 'read-only', network: NETWORK, root, commands }
    const r = await runScriptAs(user, HOST, [JSON.stringify(input)], { timeoutMs: 300_000 })
    let report: Report | undefined
    try {
      report = JSON.parse(r.stdout) as Report
    } catch {
      report = undefined
    }
    return { code: r.code, stderr: r.stderr, report }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

function refusals(result: Result | undefined, host: string): NetworkFacts['refused'] {
  return result?.sandbox?.network?.refused.filter((r) => r.host === host) ?? []
}

const CONFIGS = [
  { name: 'landlock', backend: 'landlock', resident: false },
  { name: 'bubblewrap (resident)', backend: 'bubblewrap', resident: true },
  { name: 'bubblewrap (a bwrap per run)', backend: 'bubblewrap', resident: false },
] as const

describe('network allow-list attacks, second round', () => {
  for (const user of USERS) {
    describe(`as ${user}`, () => {
      for (const config of CONFIGS) {
        describe(config.name, () => {
          let run: Awaited<ReturnType<typeof runHost>> | undefined
          beforeAll(async () => {
            const usable = await requireBackend(config.backend)
            run = !usable
              ? undefined
              : await runHost(user, config, [
                  'nulName',
                  'nulControl',
                  'wildAllowed',
                  'sniSplit',
                  'sniWhole',
                  'silentDownload',
                  'saidDownload',
                ])
          }, 600_000)

          const report = (): Report => {
            expect(run?.code, run?.stderr).toBe(0)
            return run!.report!
          }

          it("control: the wildcard passes a plain name, and the NUL name's address asked as it is is refused", async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = report()
            expect(r.results.wildAllowed?.sandbox?.network?.allowed.map((a) => a.host)).toEqual(['pkg.wild.test'])
            expect(r.results.nulControl?.stdout).not.toContain('reached')
            expect(refusals(r.results.nulControl, EXTRA.anywhere.address)).toEqual([
              { host: EXTRA.anywhere.address, port: 80, count: 1, reason: 'not-allowed' },
            ])
          })

          it('a NUL in a SOCKS5 domain name does not carry the command past the list (getaddrinfo reads up to the NUL)', async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = report()
            // Today: stdout "reached", the stand-in at 198.51.100.77 accepted it, the resolver was
            // asked "198.51.100.77\u0000.allowed.test", and the facts hold neither refusal nor traffic.
            expect(r.results.nulName?.stdout, JSON.stringify(r.results.nulName)).not.toContain('reached')
            expect(r.anywhere.accepted).toBe(0)
            expect(r.asked.filter((name) => name.includes('\0'))).toEqual([])
          })

          it('control: a ClientHello naming another server in one record is refused', async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = report()
            expect(r.results.sniWhole?.stdout).not.toContain('tls-ok')
            expect(refusals(r.results.sniWhole, 'other.test').map((f) => f.reason)).toEqual(['server-name'])
          })

          it('a ClientHello naming another server split over two TLS records is refused too', async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = report()
            // Today: the handshake completes with server name other.test through a tunnel to tls.test.
            expect(r.results.sniSplit?.stdout, JSON.stringify(r.results.sniSplit)).not.toContain('tls-ok')
            expect(r.serverNames).not.toContain('other.test')
          })

          it('control: a download through a tunnel the client spoke on is counted', async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = report()
            expect(Number(r.results.saidDownload?.stdout?.trim())).toBeGreaterThanOrEqual(STREAM_BYTES)
            const seen = r.results.saidDownload?.sandbox?.network?.allowed.find((a) => a.host === EXTRA.stream.name)
            expect(seen?.bytesReceived).toBeGreaterThanOrEqual(STREAM_BYTES)
          })

          it('a download through a tunnel the client never spoke on is counted as well', async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = report()
            expect(Number(r.results.silentDownload?.stdout?.trim())).toBeGreaterThanOrEqual(STREAM_BYTES)
            // Today: `allowed` is empty: 4 MiB from stream.test and not a byte in the facts.
            const seen = r.results.silentDownload?.sandbox?.network?.allowed.find((a) => a.host === EXTRA.stream.name)
            expect(
              seen?.bytesReceived,
              JSON.stringify(r.results.silentDownload?.sandbox?.network),
            ).toBeGreaterThanOrEqual(STREAM_BYTES)
          })
        })
      }

      // The host-side ones need one backend only: the proxy is the same behind each.
      describe('landlock (host side)', () => {
        const config = { backend: 'landlock', resident: false } as const

        it('control: a few connections to the proxy cost the host about as many descriptors', async (ctx) => {
          await needBackend(ctx, config.backend)
          const r = await runHost(user, config, ['fewConnections'])
          expect(r.code, r.stderr).toBe(0)
          const few = r.report!.results.fewConnections!
          expect(few.stdout).toBe('10\n')
          expect(few.fds!.most - few.fds!.before).toBeGreaterThanOrEqual(10)
        }, 600_000)

        it('a command cannot make the host hold a descriptor per connection without bound', async (ctx) => {
          await needBackend(ctx, config.backend)
          const r = await runHost(user, config, ['flood'])
          expect(r.code, r.stderr).toBe(0)
          const flood = r.report!.results.flood!
          expect(flood.stdout).toBe('1500\n') // the sandbox let it open every one
          // Today: about 1500 more descriptors in the host (they are the host's RLIMIT_NOFILE, shared
          // with every other run and the agent itself).
          expect(flood.fds!.most - flood.fds!.before, JSON.stringify(flood.fds)).toBeLessThan(512)
        }, 600_000)

        it("control: an allowed upstream's well-formed answer is forwarded", async (ctx) => {
          await needBackend(ctx, config.backend)
          const r = await runHost(user, config, ['weirdOk', 'afterwards'])
          expect(r.code, r.stderr).toBe(0)
          expect(r.report!.results.weirdOk?.stdout).toBe('ok\n')
          expect(r.report!.results.afterwards?.stdout).toBe('hello from allowed.test\n')
        }, 600_000)

        for (const id of ['weird099', 'weirdReason'] as const) {
          it(`an allowed upstream's malformed status line (${id}) does not kill the host process`, async (ctx) => {
            await needBackend(ctx, config.backend)
            const r = await runHost(user, config, [id, 'afterwards'])
            // Today: the host dies (ERR_HTTP_INVALID_STATUS_CODE / ERR_INVALID_CHAR thrown by
            // ServerResponse.writeHead in the proxy's 'response' listener) and prints nothing.
            expect(r.code, r.stderr.slice(-2000)).toBe(0)
            // A status outside 100..999 is not forwarded (502); a reason phrase is never forwarded
            // (node's own phrase stands in), so that answer's body may pass.
            if (id === 'weird099') expect(r.report!.results[id]?.stdout).not.toContain('bad')
            expect(r.report!.results.afterwards?.stdout).toBe('hello from allowed.test\n')
          }, 600_000)
        }
      })
    })
  }
})
