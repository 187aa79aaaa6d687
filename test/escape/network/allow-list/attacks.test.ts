// Attacks on a network allow-list, each with its control. The list allows one stand-in host; the
// command lives in a network namespace of its own whose only way out is the proxy's listener. What
// it tries besides the proxy: a raw TCP connect to the host's address and loopback (a program that
// ignores the proxy variables), UDP datagrams there (a DNS query), a name lookup of its own; through
// the proxy: names that resolve to loopback, link-local and private addresses (SSRF, rebinding), a
// CONNECT to the allowed host carrying the TLS server name of a refused one, and a refused name,
// which must never reach the resolver. Unconfined (the control) the raw connect and the datagrams
// arrive and a literal address in the list reaches loopback. Landlock, bubblewrap (resident and a
// bwrap per run); as root and as uid 65534.
import { beforeAll, describe, expect, it } from 'vitest'
import { needBackend } from '../../../support/sandbox/backends.js'
import { type HostReport, refusalsOf, runAllowListHost } from '../../../support/network/run-host.js'
import { STAND_IN } from '../../../support/network/stand-in-hosts.js'
import { USERS } from '../../host/run-as.js'

const PROXY = 'http://127.0.0.1:3128'
const ATTACKS: Record<string, string> = {
  rawHost: 'exec 3<>/dev/tcp/${HOST}/${RAW} && head -c 3 <&3',
  rawLoopback: 'exec 3<>/dev/tcp/127.0.0.1/${RAW} && head -c 3 <&3',
  udpHost: 'echo query > /dev/udp/${HOST}/${UDP}',
  udpLoopback: 'echo query > /dev/udp/127.0.0.1/${UDP}',
  lookup: `getent hosts ${STAND_IN.other.name}`,
  refusedName: `curl -sS -f -m 10 http://${STAND_IN.other.name}/hello`,
  loopbackName: `curl -sS -f -m 10 http://${STAND_IN.loopback.name}/`,
  metadataName: `curl -sS -f -m 10 http://${STAND_IN.metadata.name}/latest/meta-data/`,
  privateName: `curl -sS -f -m 10 http://${STAND_IN.private.name}/`,
  serverName: `openssl s_client -proxy 127.0.0.1:3128 -connect ${STAND_IN.allowed.name}:443 -servername ${STAND_IN.other.name} </dev/null`,
  literalLoopback: `curl -sS -m 10 --noproxy '' -x ${PROXY} http://127.0.0.1:\${RAW}/`,
  allowed: `curl -sS -f -m 10 http://${STAND_IN.allowed.name}/hello`,
}

const NETWORK = {
  // `${RAW}` becomes the raw listener's port in the host: that one literal address:port is listed.
  allow: [
    STAND_IN.allowed.name,
    STAND_IN.loopback.name,
    STAND_IN.metadata.name,
    STAND_IN.private.name,
    '127.0.0.1:${RAW}',
  ],
}

const CONFIGS = [
  { name: 'landlock', backend: 'landlock', resident: false },
  { name: 'bubblewrap (resident)', backend: 'bubblewrap', resident: true },
  { name: 'bubblewrap (a bwrap per run)', backend: 'bubblewrap', resident: false },
] as const

describe('network allow-list attacks', () => {
  for (const user of USERS) {
    describe(`as ${user}`, () => {
      let control: HostReport
      beforeAll(async () => {
        // The control: the same commands unconfined (the literal address is reached through no proxy at all).
        control = await runAllowListHost(user, {
          backend: 'none',
          network: 'inherit',
          commands: { rawHost: ATTACKS.rawHost!, udpHost: ATTACKS.udpHost!, rawLoopback: ATTACKS.rawLoopback! },
        })
      }, 600_000)

      it('control: unconfined, a raw connect and datagrams reach the host', () => {
        expect(control.results.rawHost?.stdout).toBe('raw')
        expect(control.results.rawLoopback?.stdout).toBe('raw')
        expect(control.raw.accepted).toBe(2)
        expect(control.udp.received).toBe(1)
      })

      for (const config of CONFIGS) {
        it(`${config.name}: nothing leaves but through the proxy, which refuses what the list does not name`, async (ctx) => {
          await needBackend(ctx, config.backend)
          const r = await runAllowListHost(user, {
            backend: config.backend,
            resident: config.resident,
            network: NETWORK,
            commands: ATTACKS,
          })
          const res = r.results
          // The allowed host is reached: the namespace and proxy work, so each refusal below is theirs.
          expect(res.allowed?.stdout, JSON.stringify(res.allowed)).toBe(`hello from ${STAND_IN.allowed.name}\n`)
          // No route but the proxy: a raw connect and a datagram fail at once, and nothing arrives (a
          // datagram to 127.0.0.1 is sent, into the namespace's own loopback, where nothing listens).
          for (const id of ['rawHost', 'rawLoopback', 'udpHost']) {
            expect(res[id]?.exitCode, `${id}: ${JSON.stringify(res[id])}`).not.toBe(0)
            expect(res[id]?.ms ?? Number.POSITIVE_INFINITY).toBeLessThan(5000)
          }
          expect(r.raw.accepted).toBe(1) // the literal address, through the proxy, and nothing else
          expect(r.udp.received).toBe(0)
          // A lookup of its own fails; the refused name never reached the resolver.
          expect(res.lookup?.exitCode).not.toBe(0)
          expect(res.refusedName?.exitCode).not.toBe(0)
          expect(refusalsOf(res.refusedName, STAND_IN.other.name)).toEqual([
            { host: STAND_IN.other.name, port: 80, count: 1, reason: 'not-allowed' },
          ])
          expect(res.refusedName?.sandbox?.denied).toBe(true)
          expect(res.refusedName?.sandbox?.deniedFor).toEqual(['network'])
          expect(r.asked).not.toContain(STAND_IN.other.name)
          // Names that resolve to loopback, link-local and private addresses are refused by address.
          for (const [id, host] of [
            ['loopbackName', STAND_IN.loopback.name],
            ['metadataName', STAND_IN.metadata.name],
            ['privateName', STAND_IN.private.name],
          ] as const) {
            expect(res[id]?.exitCode, id).not.toBe(0)
            expect(refusalsOf(res[id], host).map((f) => f.reason)).toEqual(['address'])
          }
          // A CONNECT to the allowed host with another server name: refused before any TLS handshake.
          expect(refusalsOf(res.serverName, STAND_IN.other.name).map((f) => f.reason)).toEqual(['server-name'])
          expect(r.tls.handshakes).toBe(0)
          // The list's literal address is the one way to loopback: not refused, and it reached the
          // raw listener (counted above), which answers no HTTP.
          expect(refusalsOf(res.literalLoopback, '127.0.0.1')).toEqual([])
        }, 600_000)
      }
    })
  }
})
