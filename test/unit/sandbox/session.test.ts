// A sandbox session's per-user runtime dir: XDG_RUNTIME_DIR, TMUX_TMPDIR and SCREENDIR point into
// the session's TMPDIR tree (the host's /run/user, /tmp and /run/screen are not writable to a
// confined command), made 0700 before any command runs; a host value inside a writable grant is
// kept; the session dir goes at dispose, runtime dir and all. Plans need no kernel: no run here.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resolvePolicy } from '../../../src/policy/resolve.js'
import type { SandboxPolicy } from '../../../src/policy/vocabulary.js'
import { SandboxSession } from '../../../src/sandbox/session.js'
import { scratchDir } from '../../support/scratch.js'

const base = scratchDir('cordon-session')
const root = path.join(base, 'root')
const home = path.join(base, 'home')
fs.mkdirSync(root)
fs.mkdirSync(home)
const env = { PATH: process.env.PATH, HOME: home, CORDON_PRIVATE_DIR: path.join(base, 'private') }
const sessions: SandboxSession[] = []
afterAll(() => Promise.all(sessions.map((s) => s.dispose())))

function sessionWith(extra: NodeJS.ProcessEnv = {}): SandboxSession {
  const session = new SandboxSession(undefined, { ...env, ...extra }, undefined)
  sessions.push(session)
  return session
}
const policyFor = (mode: SandboxPolicy['mode'], sessionId?: string): SandboxPolicy & { sessionId?: string } => ({
  ...resolvePolicy({ cwd: root, workspaceRoot: root, defaultMode: mode }),
  mode,
  ...(sessionId === undefined ? {} : { sessionId }),
})

describe('the session runtime dir', () => {
  it.for(['read-only', 'workspace-write'] as const)(
    '%s: XDG_RUNTIME_DIR and TMUX_TMPDIR are tmp/.run (0700, ours), SCREENDIR a dir in it',
    (mode) => {
      const request = sessionWith().request(policyFor(mode))
      const runtime = path.join(request.session.tmp, '.run')
      expect(request.session.runtime).toBe(runtime)
      expect(request.env).toMatchObject({ XDG_RUNTIME_DIR: runtime, TMUX_TMPDIR: runtime })
      expect(request.env.SCREENDIR).toBe(path.join(runtime, 'screen'))
      const st = fs.lstatSync(runtime)
      expect(st.isDirectory()).toBe(true)
      expect(st.mode & 0o777).toBe(0o700)
      expect(st.uid).toBe(process.getuid?.())
      // Inside the temp dir: writable in every confined mode.
      expect(request.grants.tempDir).toBe(request.session.tmp)
    },
  )

  it('a host value inside a writable grant is kept; one outside (or read-only) gets the session dir', () => {
    const mine = path.join(root, 'sockets')
    const host = { TMUX_TMPDIR: mine, XDG_RUNTIME_DIR: '/run/user/4242', SCREENDIR: `${root}/../elsewhere` }
    const write = sessionWith(host).request(policyFor('workspace-write'))
    expect(write.env.TMUX_TMPDIR).toBe(mine)
    expect(write.env.XDG_RUNTIME_DIR).toBe(write.session.runtime)
    expect(write.env.SCREENDIR).toBe(path.join(write.session.runtime, 'screen'))
    const read = sessionWith(host).request(policyFor('read-only'))
    expect(read.env.TMUX_TMPDIR).toBe(read.session.runtime)
  })

  it('a long session id gives a short label: a socket path in the runtime dir must fit in 108 bytes', () => {
    const request = sessionWith().request(policyFor('read-only', 'a-session-id-of-forty-characters-0123456'))
    expect(path.basename(request.session.dir)).toMatch(/^\d+-a-session-id-of--[A-Za-z0-9]{6}$/)
  })

  it('dispose removes the session dir, with its runtime dir empty or used', async () => {
    for (const used of [false, true]) {
      const session = new SandboxSession(undefined, env, undefined)
      const request = session.request(policyFor('read-only'))
      if (used) {
        fs.mkdirSync(path.join(request.session.runtime, 'tmux-0'), { mode: 0o700 })
        fs.writeFileSync(path.join(request.session.runtime, 'tmux-0', 'default'), '')
      }
      await session.dispose()
      expect(fs.existsSync(request.session.dir)).toBe(false)
    }
  })
})
