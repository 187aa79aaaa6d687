// What a confined run leaves where it must not (a git `commondir` that would redirect git) is
// taken away exactly once per run, by the runtime once the run's tree is gone; the verdict only
// reports it (src/sandbox/verdict.ts is pure). Real bwrap: skipped where bubblewrap is unusable.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import * as mustNotAppear from '../../../src/subprocess/process/must-not-appear.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

vi.mock('../../../src/subprocess/process/must-not-appear.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/subprocess/process/must-not-appear.js')>()
  return { ...real, takeAwayAppeared: vi.fn(real.takeAwayAppeared) }
})

const disposers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const dispose of disposers) await dispose()
})

/** A fresh git checkout with no `commondir`, and an executor confined by bubblewrap over it. */
async function checkout(): Promise<{ root: string; commondir: string; executor: LocalShellExecutor }> {
  const root = scratchDir('cordon-take-away')
  execFileSync('git', ['init', '-q', root])
  const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'] })
  const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
  disposers.push(
    () => executor.dispose(),
    () => sandbox.dispose(),
  )
  return { root, commondir: path.join(root, '.git', 'commondir'), executor }
}

/** The calls that took away this checkout's commondir (an empty list is never a take-away). */
function takeAwaysOf(commondir: string): number {
  return vi.mocked(mustNotAppear.takeAwayAppeared).mock.calls.filter(([paths]) => paths.includes(commondir)).length
}

/** The commondir and what it was moved aside to. */
function leftBehind(commondir: string): string[] {
  return fs.readdirSync(path.dirname(commondir)).filter((n) => n.startsWith('commondir'))
}

describe('a path that must not appear', () => {
  it('is taken away once per foreground run, and reported as denied', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const { root, commondir, executor } = await checkout()
    const spec = executor.resolve({
      command: 'echo ../elsewhere > .git/commondir',
      workdir: root,
      sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root },
    })
    const result = await executor.run(spec)
    expect(takeAwaysOf(commondir)).toBe(1)
    expect(result.sandbox).toMatchObject({ denied: true, deniedPaths: [commondir] })
    expect(leftBehind(commondir)).toEqual([expect.stringMatching(/^commondir\.cordon-refused-\d+$/)])
  })

  it('is taken away once per background run, and its facts say so once the tree is gone', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const { root, commondir, executor } = await checkout()
    const job = executor.start(
      executor.resolve({
        command: 'echo ../elsewhere > .git/commondir',
        workdir: root,
        sandboxPolicy: { mode: 'workspace-write', workspaceRoot: root },
      }),
    )
    await job.done
    await vi.waitFor(() => expect(job.sandbox).toMatchObject({ denied: true, deniedPaths: [commondir] }))
    // bwrap is gone within moments of its command here: a second take-away would have come by now.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(takeAwaysOf(commondir)).toBe(1)
    expect(leftBehind(commondir)).toEqual([expect.stringMatching(/^commondir\.cordon-refused-\d+$/)])
  })
})
