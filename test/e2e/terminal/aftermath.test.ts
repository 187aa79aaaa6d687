// A confined terminal session leaves protected paths as it found them, as a spawn does: a default
// protected file missing at the start (.envrc) that the session creates is moved aside once the
// session is gone, and the handle names it. Control: opted out (unprotectedPaths), it stays. Real
// ptys (node-pty), real kernel and bwrap, workspace-write on every backend.
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { scratchDir } from '../../support/scratch.js'
import { describeConfinedTerminals } from '../../support/subprocess/terminal.js'

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-aftermath') })
afterAll(() => runtime.dispose())
const base = scratchDir('cordon-aftermath-roots')
let n = 0

await describeConfinedTerminals('a confined terminal session leaves no protected file behind', (backend, sandbox) => {
  for (const optedOut of [false, true]) {
    it(
      optedOut ? 'control: an opted-out .envrc the session makes stays' : '.envrc the session makes is moved aside',
      async () => {
        const root = join(base, `${backend}-${n++}`)
        mkdirSync(root, { recursive: true })
        const spec = {
          argv: ['sh', '-c', 'echo evil > .envrc; echo made'],
          cwd: root,
          cols: 80,
          rows: 24,
          graceMs: 500,
        }
        const policy = {
          mode: 'workspace-write' as const,
          workspaceRoot: root,
          ...(optedOut ? { unprotectedPaths: ['.envrc'] } : {}),
        }
        const terminal = await runtime.spawnTerminal(sandbox().confineTerminal(spec, policy).spec)
        await terminal.done
        await terminal.terminate()
        if (optedOut) {
          expect(existsSync(join(root, '.envrc'))).toBe(true)
          expect(terminal.refusedPaths ?? []).toEqual([])
        } else {
          expect(existsSync(join(root, '.envrc'))).toBe(false)
          expect(terminal.refusedPaths).toEqual([join(root, '.envrc')])
          expect(readdirSync(root).some((f) => f.startsWith('.envrc.cordon-refused'))).toBe(true)
        }
      },
    )
  }
})
