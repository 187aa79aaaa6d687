// Scratch directories for tests: canonical (realpath'd, as policies want them) and removed
// when the test file finishes, so a suite run leaves nothing in the host temp dir.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

const made: string[] = []
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh canonical directory under the OS temp dir, removed after this test file. */
export function scratchDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `${prefix}-`)))
  made.push(dir)
  return dir
}
