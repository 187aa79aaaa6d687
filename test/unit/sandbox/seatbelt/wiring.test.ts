// Needs macOS: the wired chain end to end — the probe's canary, LocalSandbox picking seatbelt, the
// portable spawn path running sandbox-exec, an executor's denial facts (EPERM text) and a
// background job's termination. Never run here (Linux): a Mac runner verifies it; until then
// `cordon probe` calls Seatbelt unverified. The Linux half of the wiring (selection with an
// injected darwin host, the profile in the spec) is backend.test.ts.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../../src/shell/executor.js'
import { LocalSubprocessRuntime } from '../../../../src/subprocess/runtime.js'
import { scratchDir } from '../../../support/scratch.js'

const onMac = process.platform === 'darwin'

describe.skipIf(!onMac)(`Seatbelt wired through the chain (needs macOS; this is ${process.platform})`, () => {
  const root = onMac ? scratchDir('cordon-seatbelt-wired') : '/'
  const outside = onMac ? scratchDir('cordon-seatbelt-wired-out') : '/'
  const runtime = new LocalSubprocessRuntime()
  let sandbox: LocalSandbox | undefined
  afterAll(async () => {
    await runtime.dispose()
    await sandbox?.dispose()
  })

  it('probes seatbelt with its canary and runs on the portable spawn path', async () => {
    sandbox = await LocalSandbox.create()
    expect(sandbox.capabilities.chain).toEqual(['seatbelt'])
    expect(sandbox.capabilities.backends.seatbelt).toMatchObject({ usable: true, verified: true })
    expect(runtime.spawnPath.path).toBe('portable')
  })

  it('an executor run: writes in the root, a write beside it denied (EPERM) and reported', async () => {
    const shell = new LocalShellExecutor({ cwd: root, sandbox: sandbox!, subprocess: runtime })
    const target = path.join(outside, 'x')
    const result = await shell.run(
      shell.resolve({
        command: `echo ok > ok && echo no > ${target}`,
        sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root },
      }),
    )
    expect(fs.readFileSync(path.join(root, 'ok'), 'utf8')).toBe('ok\n')
    expect(fs.existsSync(target)).toBe(false)
    expect(result.stderr.text).toMatch(/Operation not permitted/)
    expect(result.sandbox).toMatchObject({ mode: 'workspace-write', denied: true, enforcement: 'partial' })
  })

  it('a background job ends on terminate, its group with it', async () => {
    const confined = sandbox!.confine(
      {
        argv: ['sh', '-c', 'sleep 30 & wait'],
        cwd: root,
        graceMs: 500,
        supervise: true,
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
      },
      { mode: 'read-only', workspaceRoot: root },
    )
    const h = runtime.spawn(confined.spec)
    h.terminate()
    expect(await h.done).toMatchObject({ signal: 'SIGTERM' })
    expect(await h.waitForExit()).toBe(true)
  })
})
