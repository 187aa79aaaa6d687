// The refusal log over the real sandbox, on each backend: a denied write, a write refused in a
// run that exits 0 all the same, a background job's denial once it settled, and a host the
// allow-list's proxy refused each join the log of the sandbox that ran them, by session; a run
// that met no refusal does not (the control: the same tool, the same log). sandbox_refusals reads
// the calling session's runs only, and `after_run` pages through them.
import { existsSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools, type BashTools } from '../../../src/tool/toolset.js'
import { describeWithBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

for (const backend of TEST_BACKENDS) {
  await describeWithBackend(backend, 'the refusal log', (sandbox) => {
    const root = realpathSync(scratchDir(`cordon-refusals-${backend}`))
    let executor: LocalShellExecutor
    let set: BashTools
    beforeAll(() => {
      executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox: sandbox(), graceMs: 500 })
      set = createBashTools({ executor, workspaceRoot: root, network: { allow: ['allowed.test'] } })
    })
    afterAll(() => executor?.dispose())
    const s1 = { callId: 'c', agent: 'a', sessionId: 's1', sessionMode: 'workspace-write' as const }
    const s2 = { ...s1, sessionId: 's2' }
    const outside = join('/etc', `cordon-refusal-${backend}-${process.pid}`)

    it('logs each run that met a refusal, by session, and no run that met none', async () => {
      const before = sandbox().refusals().lastRun
      const clean = await set.bash.execute({ command: 'echo fine > inside.txt' }, s1)
      expect(clean.content).toBe('(no output)')
      expect(existsSync(join(root, 'inside.txt'))).toBe(true)
      expect(sandbox().refusals({ afterRun: before }).entries).toEqual([])

      const denied = await set.bash.execute({ command: `echo x > ${outside}` }, s1)
      expect(denied.content).toContain('[sandbox: file access denied under workspace-write mode]')
      const ignored = await set.bash.execute({ command: `echo x > ${outside}.2; true` }, s1)
      expect(ignored.result?.exitCode).toBe(0)
      const job = await set.bash.execute({ command: `echo x > ${outside}.3`, run_in_background: true }, s2)
      const id = job.job?.id ?? ''
      expect((await set.jobOutput.execute({ job_id: id, wait_ms: 20_000 }, s2)).content).toContain(
        '[status: completed, exit code: 1]',
      )
      for (const f of [outside, `${outside}.2`, `${outside}.3`]) expect(existsSync(f)).toBe(false)

      const mine = sandbox().refusals({ afterRun: before, owner: { sessionId: 's1', agent: 'a' } }).entries
      expect(mine).toMatchObject([
        {
          run: before + 2,
          command: `echo x > ${outside}`,
          workdir: root,
          mode: 'workspace-write',
          backend,
          background: false,
          callId: 'c',
          failed: true,
          refusals: [{ kind: 'path', path: outside, operation: 'write' }],
        },
        { run: before + 3, failed: false, refusals: [{ kind: 'path', path: `${outside}.2`, operation: 'write' }] },
      ])
      // A job's run is noted once its tree is gone, which may be just after its command settled.
      const theirs = () => sandbox().refusals({ afterRun: before, owner: { sessionId: 's2', agent: 'a' } }).entries
      await expect.poll(theirs, { timeout: 5000 }).toHaveLength(1)
      expect(theirs()).toMatchObject([{ background: true, refusals: [{ path: `${outside}.3`, operation: 'write' }] }])
      // The executor reads the same log.
      expect(executor.refusals({ afterRun: before })?.entries).toHaveLength(3)
    })

    it('logs a host the allow-list refused as a refused connection', async () => {
      const before = sandbox().refusals().lastRun
      const r = await set.bash.execute({ command: 'curl -sS -f -m 10 http://refused.test/' }, s1)
      expect(r.content).toContain('[sandbox: network access refused')
      expect(sandbox().refusals({ afterRun: before }).entries).toMatchObject([
        { refusals: [{ kind: 'host', host: 'refused.test', port: 80, operation: 'connect', reason: 'not-allowed' }] },
      ])
    })

    it('sandbox_refusals lists the calling session only, and pages with after_run', async () => {
      const all = await set.refusals.execute({}, s1)
      expect(all.isError).toBe(false)
      expect(all.content).toContain(`write refused: ${outside}\n`)
      expect(all.content).toContain('connection refused: refused.test:80 (not-allowed)')
      expect(all.content).not.toContain(`${outside}.3`)
      expect(all.content).toMatch(/\[last run: \d+\]$/)
      const last = all.log?.lastRun ?? -1
      expect((await set.refusals.execute({ after_run: last }, s1)).content).toBe(
        `(no refusals logged for this session)\n[last run: ${last}]`,
      )
      expect((await set.refusals.execute({ limit: 0 }, s1)).code).toBe('INVALID_ARGUMENTS')
      const other = await set.refusals.execute({ after_run: null }, s2)
      expect(other.content).toContain(`${outside}.3`)
      expect(other.content).not.toContain(`${outside}.2`)
    })
  })
}
