// A root host's session TMPDIR is a size-bounded tmpfs (issue 27): what one run leaves there the
// next run of the sandbox finds, whichever backend runs it (Landlock, bubblewrap's resident instance,
// a bwrap of the run's own), a write past the bound fails ENOSPC, and disposal takes the mount away.
// Its control: the same fill in a plain directory of the host's disk succeeds.
import fs from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import type { SandboxExecutionPolicy } from '../../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { isMountPoint, tempMountRefusal } from '../../../../src/subprocess/private-dirs/temp-mount.js'
import { backendStatus } from '../../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../../support/sandbox/run-confined.js'
import { scratchDir } from '../../../support/scratch.js'

const MIB = 1024 * 1024
const FILL = 'head -c 16777216 /dev/zero > "$TMPDIR/fill" && echo BREACH; rm -f "$TMPDIR/fill"; true'
const refusal = tempMountRefusal()
const both = (await backendStatus('landlock')).usable && (await backendStatus('bubblewrap')).usable
const owned: LocalSandbox[] = []
afterAll(async () => {
  for (const s of owned) await s.dispose()
})

describe.skipIf(refusal !== undefined || !both)(
  `a session's tmpfs TMPDIR${refusal ? ` (skipped: ${refusal})` : both ? '' : ' (skipped: needs both backends)'}`,
  () => {
    it('is kept across runs on every backend, bounded, and gone with the sandbox', async () => {
      const root = scratchDir('temp-limit')
      const sandbox = await LocalSandbox.create({ backends: ['landlock', 'bubblewrap'] })
      owned.push(sandbox)
      const landlock: SandboxExecutionPolicy = {
        mode: 'read-only',
        workspaceRoot: root,
        limits: { tempBytes: 8 * MIB },
      }
      // sharedMemory prefers bubblewrap: the same session, another backend.
      const bubblewrap: SandboxExecutionPolicy = { ...landlock, sharedMemory: true }
      const run = async (policy: SandboxExecutionPolicy, script: string, wrapped = false) => {
        const confined = sandbox.confine(specFor(['/bin/bash', '-c', script], root), policy)
        if (wrapped && confined.spec.confinement) confined.spec.confinement.resident = undefined
        return {
          backend: confined.plan?.backend,
          account: confined.plan?.account.classes,
          ...(await runSpec(confined.spec)),
        }
      }
      const wrote = await run(landlock, 'echo kept > "$TMPDIR/kept"; echo "$TMPDIR"')
      expect(wrote.backend).toBe('landlock')
      expect(wrote.account?.temp?.governed).toBe(true)
      const tmp = wrote.stdout.trim()
      expect(isMountPoint(tmp)).toBe(true)
      const resident = await run(bubblewrap, 'cat "$TMPDIR/kept"')
      expect(resident.backend).toBe('bubblewrap')
      expect(resident.stdout).toBe('kept\n')
      expect((await run(bubblewrap, 'cat "$TMPDIR/kept"; echo again >> "$TMPDIR/kept"', true)).stdout).toBe('kept\n')
      expect((await run(landlock, 'cat "$TMPDIR/kept"')).stdout).toBe('kept\nagain\n')
      for (const policy of [landlock, bubblewrap]) {
        const fill = await run(policy, FILL)
        expect(fill.stdout, JSON.stringify(fill)).not.toContain('BREACH')
        expect(fill.stderr).toMatch(/No space left on device/)
      }
      await sandbox.dispose()
      expect(fs.existsSync(tmp)).toBe(false)
      // The control: the same fill in a directory of the host's disk.
      const control = await runSpec({ ...specFor(['/bin/bash', '-c', FILL], root), env: { TMPDIR: root } })
      expect(control.stdout).toContain('BREACH')
    }, 60_000)
  },
)
