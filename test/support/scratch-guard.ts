// Global setup (vitest.config.ts): the run's tag for scratch names, and a check once every file
// is done that no directory bearing it is left in the host temp dir. Only tagged names are
// checked: other sessions' test runs share /tmp and make the same untagged names meanwhile.
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  interface ProvidedContext {
    /** The tag test/support/scratch.ts puts in every scratch name of this run. */
    scratchRun: string
  }
}

/** The entries of `names` that bear `tag` as one dash-separated part. */
export function taggedNames(names: readonly string[], tag: string): string[] {
  return names.filter((name) => name.split('-').includes(tag))
}

/** Hands the tag to the test files; its teardown fails the run (exit status 1) on a leftover. */
export function setup(project: TestProject): () => void {
  const tag = `t${randomBytes(3).toString('hex')}`
  project.provide('scratchRun', tag)
  return () => {
    const left = taggedNames(readdirSync(tmpdir()), tag)
    if (left.length === 0) return
    console.error(
      `scratch-guard: the run left ${left.length} scratch dir(s) in ${tmpdir()} (remove them after the file): ${left.join(', ')}`,
    )
    process.exitCode = 1
  }
}
