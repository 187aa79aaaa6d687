// Real work under a network allow-list: curl (HTTP, HTTPS through CONNECT, SOCKS5), Node's http
// through the proxy variables, git, npm and pip reach the stand-in hosts the list names
// (test/support/network/), with the bytes counted; a refused name fails fast and is reported; deny
// beats a wildcard; Node 20's fetch (which ignores the proxy variables) fails fast with no route.
// Landlock, bubblewrap (resident and a bwrap per run), as root and as uid 65534. One test against
// the real registry this machine's npm reaches (its host read from `npm config get registry`).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { USERS } from '../../escape/host/run-as.js'
import { buildPackageFixtures, FIXTURE_PACKAGE } from '../../support/network/package-fixtures.js'
import { refusalsOf, runAllowListHost } from '../../support/network/run-host.js'
import { STAND_IN } from '../../support/network/stand-in-hosts.js'
import { needBackend } from '../../support/sandbox/backends.js'

const A = STAND_IN.allowed.name
const { name: PKG, version: VERSION, says: SAYS } = FIXTURE_PACKAGE
const NPM = `--registry http://${A}/files/npm/ --cache "$TMPDIR/npm-cache" --no-audit --no-fund --loglevel=error`
const NODE_HTTP = `const u = new URL(process.env.HTTP_PROXY); require('http').get({ host: u.hostname, port: u.port, path: 'http://${A}/hello', headers: { host: '${A}' } }, (r) => r.pipe(process.stdout))`
const NODE_FETCH = `fetch('http://${A}/hello').then(() => process.exit(0), (e) => { console.log('fetch failed', e.cause && e.cause.code); process.exit(3) })`

const COMMANDS: Record<string, string> = {
  curlHttp: `curl -sS -f -m 20 http://${A}/hello`,
  curlHttps: `curl -sS -f -k -m 20 https://${A}/hello`,
  curlSocks: `curl -sS -f -m 20 -x "$ALL_PROXY" http://${A}/hello`,
  bytes: `curl -sS -f -m 60 -o /dev/null -w '%{size_download}' 'http://${A}/bytes?n=1000000'`,
  wildcard: `curl -sS -f -m 20 http://${STAND_IN.wildOther.name}/hello`,
  denyWins: `curl -sS -f -m 20 http://${STAND_IN.wild.name}/hello`,
  refused: `curl -sS -f -m 20 http://${STAND_IN.other.name}/hello`,
  nodeHttp: `node -e "${NODE_HTTP}"`,
  nodeFetch: `node -e "${NODE_FETCH}"`,
  git: `git clone -q http://${A}/files/repo.git repo && cat repo/README`,
  npmView: `npm view ${PKG} version ${NPM}`,
  npmInstall: `mkdir -p proj && cd proj && npm install ${PKG} ${NPM} >/dev/null && node -p "require('${PKG}')"`,
}
const PIP = `python3 -m pip download -q --no-deps --no-cache-dir -d pip --index-url http://${A}/files/simple/ --trusted-host ${A} ${PKG} && ls pip`

const NETWORK = { allow: [A, '*.wild.test'], deny: [STAND_IN.wild.name] }
const CONFIGS = [
  { name: 'landlock', backend: 'landlock', resident: false },
  { name: 'bubblewrap (resident)', backend: 'bubblewrap', resident: true },
  { name: 'bubblewrap (a bwrap per run)', backend: 'bubblewrap', resident: false },
] as const

let files: string
beforeAll(() => {
  files = buildPackageFixtures()
})
afterAll(() => fs.rmSync(files, { recursive: true, force: true }))

describe('real work under a network allow-list', () => {
  for (const user of USERS) {
    for (const config of CONFIGS) {
      it(`${config.name} as ${user}: the listed hosts are reachable by every client, the rest refused and reported`, async (ctx) => {
        await needBackend(ctx, config.backend)
        // pip is root's here (its Python lives under /root); uid 65534 has no pip to run.
        const commands = user === 'root' ? { ...COMMANDS, pip: PIP } : COMMANDS
        // Real work writes: a clone, node_modules (chmod included, which read-only refuses).
        const r = await runAllowListHost(user, {
          ...config,
          mode: 'workspace-write',
          network: NETWORK,
          files,
          commands,
        })
        const res = r.results
        const hello = `hello from ${A}\n`
        for (const id of ['curlHttp', 'curlHttps', 'curlSocks', 'nodeHttp'])
          expect(res[id]?.stdout, `${id}: ${JSON.stringify(res[id])}`).toBe(hello)
        expect(res.wildcard?.stdout).toBe(`hello from ${STAND_IN.wildOther.name}\n`)
        expect(res.git?.stdout, JSON.stringify(res.git)).toBe(`${SAYS}\n`)
        expect(res.npmView?.stdout?.trim(), JSON.stringify(res.npmView)).toBe(VERSION)
        expect(res.npmInstall?.stdout?.trim(), JSON.stringify(res.npmInstall)).toBe(SAYS)
        if (user === 'root')
          expect(res.pip?.stdout, JSON.stringify(res.pip)).toContain('cordon_tinypkg-1.0-py3-none-any.whl')
        // The bytes each allowed host carried are counted.
        expect(res.bytes?.stdout).toBe('1000000')
        const counted = res.bytes?.sandbox?.network?.allowed.find((a) => a.host === A && a.port === 80)
        expect(counted?.bytesReceived).toBeGreaterThanOrEqual(1_000_000)
        expect(res.bytes?.sandbox?.denied).toBe(false)
        // Refused: fast, reported, denied for the network; deny beats the wildcard.
        expect(res.refused?.exitCode).not.toBe(0)
        expect(res.refused?.ms).toBeLessThan(5000)
        expect(refusalsOf(res.refused, STAND_IN.other.name)).toEqual([
          { host: STAND_IN.other.name, port: 80, count: 1, reason: 'not-allowed' },
        ])
        expect(res.refused?.sandbox).toMatchObject({ denied: true, deniedFor: ['network'] })
        expect(refusalsOf(res.denyWins, STAND_IN.wild.name).map((f) => f.reason)).toEqual(['denied'])
        // Node 20's fetch ignores the proxy variables: no route, so it fails at once.
        expect(res.nodeFetch?.exitCode, JSON.stringify(res.nodeFetch)).toBe(3)
        expect(res.nodeFetch?.ms).toBeLessThan(5000)
        expect(r.asked).not.toContain(STAND_IN.other.name)
        expect(r.asked).not.toContain(STAND_IN.wild.name)
      }, 600_000)
    }
  }
})

describe('the real registry through the proxy', () => {
  const registry = new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim())
  const pkg = 'is-number@7.0.0'
  const reachable = (() => {
    try {
      execFileSync('npm', ['view', pkg, 'version', '--prefer-online'], { stdio: 'ignore', timeout: 60_000 })
      return true
    } catch {
      return false
    }
  })()

  for (const backend of ['landlock', 'bubblewrap'] as const) {
    it(`${backend}: npm view and npm install of a small package, only the registry's host listed`, async (ctx) => {
      if (!reachable) ctx.skip(`the registry (${registry.host}) is not reachable from this machine`)
      await needBackend(ctx, backend)
      const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-real-registry-')))
      const sandbox = await LocalSandbox.create({ backends: [backend] })
      try {
        const executor = new LocalShellExecutor({ sandbox })
        const npm = `--cache "$TMPDIR/npm-cache" --no-audit --no-fund --loglevel=error --prefer-online`
        const r = await executor.run({
          command: `npm view ${pkg} version ${npm} && npm install ${pkg} ${npm} >/dev/null && node -p "typeof require('is-number')"`,
          workdir: root,
          timeoutMs: 300_000,
          stdoutMaxBytes: 65536,
          sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root, network: { allow: [registry.hostname] } },
        })
        expect(r.exitCode, r.stderr.text).toBe(0)
        expect(r.stdout.text.trim().split('\n')).toEqual(['7.0.0', 'function'])
        const allowed = r.sandbox?.network?.allowed.find((a) => a.host === registry.hostname)
        expect(allowed?.bytesReceived).toBeGreaterThan(0)
        expect(r.sandbox?.network?.refused).toEqual([])
      } finally {
        await sandbox.dispose()
        fs.rmSync(root, { recursive: true, force: true })
      }
    }, 600_000)
  }
})
