// A root host's session TMPDIR and bubblewrap's /dev/shm share one size-bounded tmpfs (issue 27):
// what one run leaves there the next run of the sandbox finds, whichever backend runs it (Landlock,
// bubblewrap's resident instance, a bwrap of the run's own), a write past the bound fails ENOSPC
// through either, and disposal takes the mount away. With no limits.tempBytes the bound is a
// quarter of the host's memory. Its control: the same fill in a plain directory of the host's disk.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { SandboxExecutionPolicy } from '../../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { DEFAULT_TEMP_FRACTION } from '../../../../src/policy/defaults.js'
import { hostBounds } from '../../../../src/sandbox/confinement/bounds.js'
import { isMountPoint, tempMountRefusal } from '../../../../src/subprocess/private-dirs/temp-mount.js'
import { backendStatus } from '../../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../../support/sandbox/run-confined.js'
import { scratchDir } from '../../../support/scratch.js'

const MIB = 1024 * 1024
const FILL = 'head -c 16777216 /dev/zero > "$TMPDIR/fill" && echo BREACH; rm -f "$TMPDIR/fill"; true'
const FILL_SHM = 'head -c 16777216 /dev/zero > /dev/shm/fill && echo BREACH; rm -f /dev/shm/fill; true'
// 5 MiB in each fits alone but not together: one bound, not one per place.
const SPLIT =
  'head -c 5242880 /dev/zero > "$TMPDIR/half" && head -c 5242880 /dev/zero > /dev/shm/half && echo BREACH; rm -f "$TMPDIR/half" /dev/shm/half; true'
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
      expect(path.basename(tmp)).toBe('t')
      expect(isMountPoint(path.dirname(tmp))).toBe(true)
      const resident = await run(bubblewrap, 'cat "$TMPDIR/kept"')
      expect(resident.backend).toBe('bubblewrap')
      expect(resident.stdout).toBe('kept\n')
      expect((await run(bubblewrap, 'cat "$TMPDIR/kept"; echo again >> "$TMPDIR/kept"', true)).stdout).toBe('kept\n')
      expect((await run(landlock, 'cat "$TMPDIR/kept"')).stdout).toBe('kept\nagain\n')
      for (const [policy, script] of [
        [landlock, FILL],
        [bubblewrap, FILL],
        [bubblewrap, FILL_SHM],
        [bubblewrap, SPLIT],
      ] as const) {
        const fill = await run(policy, script)
        expect(fill.stdout, JSON.stringify(fill)).not.toContain('BREACH')
        expect(fill.stderr).toMatch(/No space left on device/)
      }
      await sandbox.dispose()
      expect(fs.existsSync(tmp)).toBe(false)
      // The control: the same fills in a directory of the host's disk.
      const control = await runSpec({ ...specFor(['/bin/bash', '-c', FILL], root), env: { TMPDIR: root } })
      expect(control.stdout).toContain('BREACH')
      const split = SPLIT.replaceAll('/dev/shm', '"$TMPDIR"/shm')
      fs.mkdirSync(`${root}/shm`)
      expect((await runSpec({ ...specFor(['/bin/bash', '-c', split], root), env: { TMPDIR: root } })).stdout).toContain(
        'BREACH',
      )
    }, 60_000)

    it('with no limits.tempBytes, is a tmpfs of a quarter of the host memory, said so in the account', async () => {
      const root = scratchDir('temp-default')
      const sandbox = await LocalSandbox.create({ backends: ['landlock', 'bubblewrap'] })
      owned.push(sandbox)
      const want = Math.floor(hostBounds().memory * DEFAULT_TEMP_FRACTION)
      const policy: SandboxExecutionPolicy = { mode: 'read-only', workspaceRoot: root }
      for (const [p, place] of [
        [policy, '"$TMPDIR"'],
        [{ ...policy, sharedMemory: true }, '/dev/shm'],
      ] as const) {
        const confined = sandbox.confine(
          specFor(['/bin/bash', '-c', `df -B1 --output=size ${place} | tail -1`], root),
          p,
        )
        expect(confined.plan?.account.classes.temp).toMatchObject({ governed: true })
        expect(confined.plan?.account.classes.temp?.how).toContain('by default 25%')
        const out = await runSpec(confined.spec)
        const size = Number(out.stdout.trim())
        // tmpfs rounds its size up to whole pages.
        expect(size, JSON.stringify(out)).toBeGreaterThanOrEqual(want)
        expect(size).toBeLessThan(want + 4096 * 2)
      }
    }, 60_000)
  },
)
