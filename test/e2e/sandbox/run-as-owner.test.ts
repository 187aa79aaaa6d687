// A root host whose workspace belongs to another uid: the command runs as the owner (uid and gid,
// no capability) on both backends, so it can write its own workspace, and nothing outside widens.
// Control: with runAsOwner false the same root command, capability-less, cannot write there.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { ConfinementPlan } from '../../../src/sandbox/confinement/plan.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-run-as'))
fs.chmodSync(base, 0o755)
const priv = path.join(base, 'private')
const env = { ...process.env, CORDON_PRIVATE_DIR: priv }
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const NOBODY = 65534
const sh = (script: string, cwd: string) => specFor(['bash', '-c', script], cwd, { PATH: '/usr/bin:/bin' })

describe.each(['landlock', 'bubblewrap'] as const)('a workspace owned by another uid [%s]', (backend) => {
  it('runs as the owner: writes its workspace, owns what it makes, and still cannot write outside', async (ctx) => {
    if (process.getuid?.() !== 0) ctx.skip('needs a root host')
    await needBackend(ctx, backend)
    const root = path.join(base, `ws-${backend}`)
    const outside = path.join(base, `out-${backend}`)
    fs.mkdirSync(root)
    fs.mkdirSync(outside, { mode: 0o777 })
    fs.chmodSync(outside, 0o777) // writable by the owner's DAC: only the sandbox refuses it
    fs.chownSync(root, NOBODY, NOBODY)
    const sandbox = await LocalSandbox.create({ backends: [backend], env })
    const script = `echo hi > f && id -u && id -g; echo x > ${outside}/leak && echo LEAKED; true`
    try {
      const asRoot = sandbox.confine(sh(script, root), {
        mode: 'workspace-write',
        workspaceRoot: root,
        runAsOwner: false,
      })
      const control = await runSpec(asRoot.spec)
      expect(control.stdout).toBe('')
      expect(fs.existsSync(path.join(root, 'f'))).toBe(false)
      const c = sandbox.confine(sh(script, root), { mode: 'workspace-write', workspaceRoot: root })
      expect((c.plan as ConfinementPlan).runAs).toMatchObject({ uid: NOBODY, gid: NOBODY })
      expect(fs.statSync(c.tempDir!).uid).toBe(NOBODY)
      const r = await runSpec(c.spec)
      expect(r.stdout).toBe(`${NOBODY}\n${NOBODY}\n`)
      expect(fs.statSync(path.join(root, 'f')).uid).toBe(NOBODY)
      expect(fs.existsSync(path.join(outside, 'leak'))).toBe(false)
      // The session dirs of root's sessions stay out of its reach.
      const rootSession = sandbox.confine(sh('true', root), { mode: 'read-only', workspaceRoot: root })
      const peek = sandbox.confine(sh(`ls ${rootSession.tempDir} && echo LISTED`, root), {
        mode: 'workspace-write',
        workspaceRoot: root,
      })
      expect((await runSpec(peek.spec)).stdout).not.toContain('LISTED')
    } finally {
      await sandbox.dispose()
    }
  })
})
