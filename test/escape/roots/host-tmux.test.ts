// A host tmux server runs whatever a client asks, outside any sandbox: a confined
// `tmux -S /tmp/tmux-UID/S new-window CMD` (or a bare `tmux new-window CMD` under an inherited
// $TMUX) would be a way out. bubblewrap masks every tmux server dir, and the scrub drops $TMUX;
// Landlock cannot refuse a unix connect by path (its account says so), so there only a cut
// network holds. Each attack has its control: the same client, unconfined, gets its window run.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendStatus, gateFor } from '../../support/sandbox/backends.js'
import { cordonArgv, spawnAs } from '../../support/workload/run.js'

const uid = process.getuid?.() ?? 0
const dir = `/tmp/tmux-${uid}`
const socket = path.join(dir, `cordon-escape-${process.pid}`)
const marks = fs.mkdtempSync('/var/tmp/cordon-tmux-')
const ENV = { PATH: '/usr/bin:/bin', HOME: '/', LC_ALL: 'C' }
let tmux = true

beforeAll(() => {
  fs.chmodSync(marks, 0o777)
  try {
    fs.mkdirSync(dir, { mode: 0o700, recursive: true })
    execFileSync('tmux', ['-S', socket, 'new-session', '-d', '-s', 'host', 'sleep 600'], { stdio: 'ignore' })
  } catch {
    tmux = false
  }
})
afterAll(() => {
  if (tmux) execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' })
  fs.rmSync(socket, { force: true })
  fs.rmSync(marks, { recursive: true, force: true })
})

/** The client command that asks the host server to run `touch MARK` (its window). */
const attack = (mark: string, viaEnv: boolean) =>
  viaEnv
    ? `tmux new-window -d "touch ${mark}"; sleep 0.5`
    : `tmux -S ${socket} new-window -d "touch ${mark}"; sleep 0.5`

const status = { landlock: await backendStatus('landlock'), bubblewrap: await backendStatus('bubblewrap') }
const CASES = [
  { backend: 'bubblewrap', network: 'inherit' },
  { backend: 'bubblewrap', network: 'deny' },
  { backend: 'landlock', network: 'deny' },
] as const

describe.each(CASES)('a host tmux server under $backend, network $network', ({ backend, network }) => {
  it.for([{ viaEnv: false }, { viaEnv: true }])(
    'is out of reach (through $TMUX: $viaEnv), and reachable unconfined',
    { timeout: 60_000 },
    async ({ viaEnv }, ctx) => {
      const gate = gateFor(status[backend])
      if (gate === 'skip') ctx.skip(`${backend} is not usable on this host`)
      if (gate === 'fail') throw new Error(`${backend} is required (CORDON_REQUIRE_BACKENDS) but not usable`)
      if (!tmux && process.env.CI) throw new Error('tmux is required in CI')
      if (!tmux) ctx.skip('tmux is not installed on this host')
      const env = viaEnv ? { ...ENV, TMUX: `${socket},1,0` } : ENV
      const confinedMark = path.join(marks, `${backend}-${network}-${viaEnv}-confined`)
      const script = attack(confinedMark, viaEnv)
      const r = await spawnAs(
        uid,
        cordonArgv(['--backend', backend, '--network', network, '--', 'bash', '-c', script]),
        {
          cwd: marks,
          env,
        },
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(fs.existsSync(confinedMark), `${r.stdout}${r.stderr}`).toBe(false)

      const controlMark = path.join(marks, `${backend}-${network}-${viaEnv}-control`)
      await spawnAs(uid, ['bash', '-c', attack(controlMark, viaEnv)], { cwd: marks, env })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(fs.existsSync(controlMark)).toBe(true)
    },
  )
})
