// A spill path named to a model stays valid for its session: a confined run's spill file lies in
// the session's own spill dir, which the session's later commands can read (and no other
// session's can), and which goes with the sandbox's dispose(), not with the run or the runtime.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = fs.realpathSync(scratchDir('cordon-spill-session'))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

describe('spill files of a session', () => {
  it("live in the session's spill dir, readable by its next command, gone with the sandbox", async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create({ backends: ['landlock'] })
    const runtime = new LocalSubprocessRuntime()
    const ex = new LocalShellExecutor({
      cwd: root,
      workspaceRoot: root,
      sandbox,
      subprocess: runtime,
      maxOutputBytes: 1000,
    })
    const policy = { mode: 'read-only' as const, workspaceRoot: root, sessionId: 'model-a' }
    let spill: string | undefined
    try {
      const long = await ex.run(ex.resolve({ command: 'seq 1 20000', sandboxPolicy: policy }))
      spill = long.stdout.spillPath
      expect(spill).toBeDefined()
      expect(path.basename(path.dirname(spill!))).toBe('spill')
      // The runtime is done with the run; the file stays for the session.
      await runtime.dispose()
      expect(fs.existsSync(spill!)).toBe(true)
      const again = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox })
      const tail = await again.run(again.resolve({ command: `tail -n 1 ${spill}`, sandboxPolicy: policy }))
      expect(tail.stdout.text).toBe('20000\n')
      // Another session cannot read it.
      const other = await again.run(
        again.resolve({ command: `tail -n 1 ${spill}`, sandboxPolicy: { ...policy, sessionId: 'model-b' } }),
      )
      expect(other.stdout.text).toBe('')
      await again.dispose()
    } finally {
      await sandbox.dispose()
    }
    expect(fs.existsSync(spill!)).toBe(false)
  })
})
