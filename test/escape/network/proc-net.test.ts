// Under `network: deny` a command must not learn the host's connections and unix socket paths
// from procfs. The host listens on a unix socket at a path of its own; unconfined (the control),
// `cat /proc/<host pid>/net/unix` shows that path. bubblewrap's own /proc (a pid namespace and a
// network namespace of the run's) shows neither the host pid nor the path. Landlock cannot close
// procfs per process: the path shows, and the account says so (network partial, naming
// /proc/PID/net). As root and as uid 65534.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { needBackend } from '../../support/sandbox/backends.js'
import type { AttackUser } from '../attacks/attack.js'
import { runScriptAs, USERS } from '../host/run-as.js'
import { scratchDirAs } from '../../support/scratch.js'

const HOST = `${import.meta.dirname}/proc-net-host.ts`
const dir = scratchDirAs('root', 'cordon-proc-net')
const socketPath = path.join(dir, `host-listener-${process.pid}.sock`)
const server = net.createServer((s) => s.end())
beforeAll(() => new Promise<void>((r) => server.listen(socketPath, r)))
afterAll(() => {
  server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

interface ProcNetOutcome {
  stdout: string
  enforcement?: string
  network?: { governed: boolean; how: string }
}

async function readProcNet(backend: SandboxBackendName | 'none', user: AttackUser): Promise<ProcNetOutcome> {
  const root = scratchDirAs(user, 'cordon-proc-net-root')
  const r = await runScriptAs(user, HOST, [JSON.stringify({ backend, pid: process.pid, root })], { timeoutMs: 120_000 })
  fs.rmSync(root, { recursive: true, force: true })
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as ProcNetOutcome
}

describe('/proc/PID/net under network: deny', () => {
  for (const user of USERS) {
    it(`control as ${user}: unconfined, the host's socket path shows in /proc/<host pid>/net/unix`, async () => {
      expect((await readProcNet('none', user)).stdout).toContain(socketPath)
    })

    it(`bubblewrap as ${user}: its own /proc shows neither the host pid nor the socket path`, async (ctx) => {
      await needBackend(ctx, 'bubblewrap')
      const o = await readProcNet('bubblewrap', user)
      expect(o.stdout).not.toContain(socketPath)
      expect(o.stdout).toMatch(new RegExp(`/proc/${process.pid}/net/unix: No such file`))
      expect(o.network?.governed).toBe(true)
    })

    it(`landlock as ${user}: the path shows, and the account says network is partial, naming /proc/PID/net`, async (ctx) => {
      await needBackend(ctx, 'landlock')
      const o = await readProcNet('landlock', user)
      expect(o.stdout).toContain(socketPath)
      expect(o.enforcement).toBe('partial')
      expect(o.network?.governed).toBe(false)
      expect(o.network?.how).toContain('/proc/PID/net')
    })
  }
})
