// Scratch directories for tests: canonical (realpath'd, as policies want them) and removed
// when the test file finishes, so a suite run leaves nothing in the host temp dir. Each name
// carries the run's tag (test/support/scratch-guard.ts), which fails the run if one is left.
import { chownSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, inject } from 'vitest'

/** uid and gid of `nobody`, the suite's unprivileged user. */
const NOBODY = 65534

const made: string[] = []
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

// Absent when a file runs under a config without the guard.
const tag = inject('scratchRun')

/** A fresh canonical directory under the OS temp dir, removed after this test file. */
export function scratchDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), tag ? `${prefix}-${tag}-` : `${prefix}-`)))
  made.push(dir)
  return dir
}

/** A scratchDir named for `user` and owned by them (uid 65534 for `nobody`), removed after this test file. */
export function scratchDirAs(user: 'root' | 'nobody', prefix: string): string {
  const dir = scratchDir(`${prefix}-${user}`)
  if (user === 'nobody') chownSync(dir, NOBODY, NOBODY)
  return dir
}
