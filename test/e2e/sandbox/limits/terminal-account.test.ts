// A confined terminal joins no cgroup leaves (node-pty starts it), so its account must not claim
// them: the same policy that a run holds to a memory cgroup is `partial` for a terminal, and says
// which limit is not governed. Control: confine() of that policy on this host claims the cgroup.
import { afterAll, describe, expect, it } from 'vitest'
import type { SandboxExecutionPolicy } from '../../../../src/policy/vocabulary.js'
import { hostBounds } from '../../../../src/sandbox/confinement/bounds.js'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { needBackend, TEST_BACKENDS } from '../../../support/sandbox/backends.js'
import { specFor } from '../../../support/sandbox/run-confined.js'
import { scratchDir } from '../../../support/scratch.js'

const root = scratchDir('cordon-terminal-account')
const cgroups = hostBounds().cgroups.memory
const owned: LocalSandbox[] = []
afterAll(async () => {
  for (const s of owned) await s.dispose()
})

describe.skipIf(!cgroups)(
  `a confined terminal's limits${cgroups ? '' : ' (skipped: no writable memory cgroup here, so no run claims one)'}`,
  () => {
    for (const backend of TEST_BACKENDS)
      it(`${backend}: a memory limit a run holds by cgroup is not governed in a terminal`, async (ctx) => {
        await needBackend(ctx, backend)
        const sandbox = await LocalSandbox.create({ backends: [backend] })
        owned.push(sandbox)
        const policy: SandboxExecutionPolicy = {
          mode: 'read-only',
          workspaceRoot: root,
          limits: { memoryBytes: 256 * 1024 * 1024 },
        }
        const run = sandbox.confine(specFor(['/bin/true'], root), policy)
        expect(run.plan?.account.classes.memory?.governed).toBe(true)
        const terminal = sandbox.confineTerminal(
          { argv: ['/bin/true'], cwd: root, cols: 80, rows: 24, graceMs: 1000 },
          policy,
        )
        expect(terminal.backend).toBe(backend)
        expect(terminal.enforcement).toBe('partial')
        expect(terminal.account?.ungoverned).toContain('memory')
        expect(terminal.account?.classes.memory?.how).toMatch(/^not governed/)
      })
  },
)
