// Background jobs through the real tools over real process trees: bash starts a job, job_output
// reads it (consuming, the [stderr] section, lossy reads with spill paths, status lines),
// job_kill ends its whole tree; a job belongs to its owner; the jobs port is the harness's to
// replace, and a job no runtime accepted does not keep running.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import type { ApprovalRequest } from '../../../src/tool/approval.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { InMemoryJobs } from '../../../src/tool/jobs/in-memory.js'
import type { JobInfo, JobOwner, Jobs, JobStart } from '../../../src/tool/jobs/port.js'
import type { ToolCall } from '../../../src/tool/model-tool.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { alive, eventually, pidsIn } from '../../support/subprocess/processes.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-jobs')
const STATUS_LINE = /\n\[status: [^\]]+\]$/

describe('job tools over an unsandboxed executor', () => {
  const executor = new LocalShellExecutor({ cwd: root, graceMs: 300, maxOutputBytes: 2000 })
  const jobs = new InMemoryJobs()
  const set = createBashTools({ executor, workspaceRoot: root, jobs })
  afterAll(() => jobs.dispose())
  const call: ToolCall = { callId: 'c1', agent: 'a', sessionId: 's1' }

  /** Reads job_output until `done(text)` holds; returns the output seen (status lines removed) and the last content. */
  async function readUntil(id: string, done: (text: string) => boolean): Promise<{ text: string; last: string }> {
    let text = ''
    let last = ''
    for (let i = 0; i < 250 && !done(text); i++) {
      last = (await set.jobOutput.execute({ job_id: id, wait_ms: 20 }, call)).content
      const body = last.replace(STATUS_LINE, '')
      if (body !== '(no new output)') text += body
    }
    return { text, last }
  }

  it('start → job_output → job_kill: a real tree, daemon included, is gone after the kill', async () => {
    const started = await set.bash.execute(
      { command: 'echo $$; setsid sleep 100 & echo $!; echo warn >&2; sleep 100', run_in_background: true },
      call,
    )
    expect(started).toMatchObject({ isError: false, job: { status: 'running', command: expect.any(String) } })
    const id = started.job!.id
    expect(started.content).toBe(
      `Started background job ${id}.\nRead its output with job_output({"job_id":"${id}"}); stop it with job_kill({"job_id":"${id}"}).`,
    )
    const { text, last } = await readUntil(id, (t) => pidsIn(t).length >= 2 && t.includes('warn'))
    expect(text).toContain('[stderr]\nwarn\n')
    expect(last).toMatch(/\[status: running\]$/)
    const pids = pidsIn(text)
    expect(pids.every(alive)).toBe(true)

    const killed = await set.jobKill.execute({ job_id: id }, call)
    expect(killed).toMatchObject({ isError: false, job: { status: 'killed' } })
    expect(killed.content).toMatch(/\n\[status: killed, signal: SIGTERM\]$/)
    expect(await eventually(() => !pids.some(alive), 5000)).toBe(true)

    const again = await set.jobKill.execute({ job_id: id }, call)
    expect(again.content).toBe(
      `(no new output)\n[job ${id} had already ended; nothing was killed]\n[status: killed, signal: SIGTERM]`,
    )
  })

  it('reads consume; stderr is a marked section; the status line comes last', async () => {
    const { job } = await set.bash.execute(
      { command: 'printf out; printf err >&2; exit 3', run_in_background: true },
      call,
    )
    const first = await set.jobOutput.execute({ job_id: job!.id, wait_ms: 5000 }, call)
    expect(first.content).toBe('out\n[stderr]\nerr\n[status: completed, exit code: 3]')
    expect(first.job).toMatchObject({ status: 'completed', exitCode: 3, signal: null })
    // A strict caller sends every argument, null for the ones it does not use.
    expect((await set.jobOutput.execute({ job_id: job!.id, wait_ms: null }, call)).content).toBe(
      '(no new output)\n[status: completed, exit code: 3]',
    )
  })

  it('wait_ms waits for the end, and no longer than asked', async () => {
    const quick = await set.bash.execute({ command: 'sleep 0.3; echo done', run_in_background: true }, call)
    expect((await set.jobOutput.execute({ job_id: quick.job!.id, wait_ms: 10_000 }, call)).content).toBe(
      'done\n\n[status: completed, exit code: 0]',
    )
    const slow = await set.bash.execute({ command: 'sleep 100', run_in_background: true }, call)
    const before = Date.now()
    const read = await set.jobOutput.execute({ job_id: slow.job!.id, wait_ms: 200 }, call)
    expect(Date.now() - before).toBeLessThan(5000)
    expect(read.content).toBe('(no new output)\n[status: running]')
    await set.jobKill.execute({ job_id: slow.job!.id }, call)
  })

  it('a lossy read names the spill file, which holds the whole stream', async () => {
    const { job } = await set.bash.execute({ command: 'seq 1 100000', run_in_background: true }, call)
    const read = await set.jobOutput.execute({ job_id: job!.id, wait_ms: 10_000 }, call)
    const note = /\n\[some output was dropped from memory; full output: (\S+)\]\n/.exec(read.content)
    expect(note).not.toBeNull()
    expect(readFileSync(note![1]!, 'utf8')).toBe(`${Array.from({ length: 100000 }, (_, i) => i + 1).join('\n')}\n`)
    expect(read.content).toMatch(/100000\n\n\[some output.*\]\n\[status: completed, exit code: 0\]$/)
  })

  it('a spawn failure shows once, in the [stderr] section, and the job is killed before exit', async () => {
    const { job } = await set.bash.execute({ command: 'true', workdir: 'missing', run_in_background: true }, call)
    const read = await set.jobOutput.execute({ job_id: job!.id, wait_ms: 5000 }, call)
    expect(read.content).toBe(
      `[stderr]\nspawn failed: chdir: ENOENT (${join(root, 'missing')})\n\n[status: killed, killed before exit]`,
    )
  })

  it('a job belongs to its owner: another session or agent cannot see, read or kill it', async () => {
    const { job } = await set.bash.execute({ command: 'sleep 100', run_in_background: true }, call)
    const id = job!.id
    for (const other of [
      { callId: 'x', agent: 'a', sessionId: 's2' },
      { callId: 'x', agent: 'b', sessionId: 's1' },
    ]) {
      expect(await set.jobOutput.execute({ job_id: id }, other)).toEqual({
        isError: true,
        code: 'JOB_NOT_FOUND',
        content: `no background job "${id}" in this session; this session has no background jobs`,
      })
      expect((await set.jobKill.execute({ job_id: id }, other)).code).toBe('JOB_NOT_FOUND')
    }
    expect(jobs.list({ sessionId: 's1', agent: 'a' }).find((j) => j.id === id)?.status).toBe('running')
    const unknown = await set.jobOutput.execute({ job_id: 'job-999' }, call)
    expect(unknown.content).toMatch(/^no background job "job-999" in this session; its jobs: job-1 \(killed\), /)
    await set.jobKill.execute({ job_id: id }, call)
  })

  it('a background call aborted before it starts starts nothing', async () => {
    const ac = new AbortController()
    ac.abort()
    const before = jobs.list({ sessionId: 's1', agent: 'a' }).length
    const marker = join(root, 'never-started')
    const r = await set.bash.execute(
      { command: `touch ${marker}`, run_in_background: true },
      { ...call, signal: ac.signal },
    )
    expect(r).toMatchObject({ isError: true, code: 'TOOL_ABORTED' })
    expect(jobs.list({ sessionId: 's1', agent: 'a' }).length).toBe(before)
    await new Promise((r) => setTimeout(r, 200))
    expect(existsSync(marker)).toBe(false)
  })

  it("the harness's own jobs port names and owns the jobs", async () => {
    /** A harness runtime: its own ids, and a quota of one running job per owner. */
    class QuotaJobs implements Jobs {
      readonly inner = new InMemoryJobs()
      readonly started: JobStart[] = []
      start(start: JobStart): JobInfo {
        if (this.inner.list(start.owner).some((j) => j.status === 'running')) throw new Error('one job at a time')
        this.started.push(start)
        return this.inner.start(start)
      }
      output(id: string, owner: JobOwner) {
        return this.inner.output(id, owner)
      }
      kill(id: string, owner: JobOwner) {
        return this.inner.kill(id, owner)
      }
      list(owner: JobOwner) {
        return this.inner.list(owner)
      }
    }
    const quota = new QuotaJobs()
    const own = createBashTools({ executor, workspaceRoot: root, jobs: quota })
    const first = await own.bash.execute({ command: 'sleep 100', run_in_background: true }, call)
    expect(quota.started.map((s) => [s.command, s.callId, s.owner])).toEqual([
      ['sleep 100', 'c1', { sessionId: 's1', agent: 'a' }],
    ])
    // Refused by the port: the process it would have owned must not keep running.
    const marker = join(root, 'refused-job-ran')
    const refused = await own.bash.execute({ command: `sleep 1; touch ${marker}`, run_in_background: true }, call)
    expect(refused).toEqual({
      isError: true,
      code: 'JOBS_FAILED',
      content: 'the jobs runtime refused the job: one job at a time',
    })
    await new Promise((r) => setTimeout(r, 1500))
    expect(existsSync(marker)).toBe(false)
    expect((await own.jobKill.execute({ job_id: first.job!.id }, call)).job?.status).toBe('killed')
    await quota.inner.dispose()
  })
})

describe('job tools over a sandboxed executor', async () => {
  const usable = await requireBackend('landlock')
  const outside = scratchDir('cordon-jobs-outside')
  let sandbox: LocalSandbox
  beforeAll(async () => {
    sandbox = await LocalSandbox.create()
  })
  afterAll(() => sandbox?.dispose())
  const call: ToolCall = { callId: 'c1', agent: 'a', sessionId: 's1' }

  it.skipIf(!usable)(
    'a background denial shows in job_output with the hint; the retry is approved knowing it',
    async () => {
      const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 300 })
      const asked: ApprovalRequest[] = []
      const jobs = new InMemoryJobs()
      const set = createBashTools({
        executor,
        workspaceRoot: root,
        jobs,
        approval: {
          request: async (r) => {
            asked.push(r)
            return { outcome: 'allowed-once', digest: r.digest }
          },
        },
      })
      const file = join(outside, 'from-job')
      const command = `echo x > ${file}`
      const { job } = await set.bash.execute({ command, run_in_background: true }, call)
      const read = await set.jobOutput.execute({ job_id: job!.id, wait_ms: 5000 }, call)
      expect(read.content).toMatch(
        /(Permission denied|Read-only file system)\n\n\[sandbox: file access denied under read-only mode\]\n\[sandbox: escalation available — .*\]\n\[status: completed, exit code: 1\]$/,
      )
      const retry = await set.bash.execute(
        { command, sandbox_permissions: 'danger-full-access', justification: 'it writes outside the workspace' },
        { ...call, callId: 'c2' },
      )
      expect(retry).toMatchObject({ isError: false, result: { exitCode: 0 } })
      expect(asked[0]?.precedingFailure).toEqual({
        kind: 'denied',
        callId: 'c1',
        command,
        workdir: root,
        mode: 'read-only',
        paths: [file],
        jobId: job!.id,
        sameCommand: true,
        callsSince: 0,
      })
      expect(existsSync(file)).toBe(true)
      await jobs.dispose()
    },
  )

  it.skipIf(!usable)('a background runner failure shows as the runner marker; the command did not run', async () => {
    // A real confinement step the kernel refuses: the plan names a ruleset fd that is not one.
    const broken = {
      confine(spec: Parameters<LocalSandbox['confine']>[0], policy: Parameters<LocalSandbox['confine']>[1]) {
        const confined = sandbox.confine(spec, policy)
        const c = confined.spec.confinement!
        return {
          ...confined,
          spec: {
            ...confined.spec,
            confinement: { ...c, steps: { ...c.steps!, ruleset: { fd: 999_999, closed: false } } },
          },
        }
      },
    }
    const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox: broken })
    const set = createBashTools({ executor, workspaceRoot: root })
    const marker = join(outside, 'runner-failed')
    const { job } = await set.bash.execute({ command: `touch ${marker}`, run_in_background: true }, call)
    const read = await set.jobOutput.execute({ job_id: job!.id, wait_ms: 5000 }, call)
    expect(read.content).toMatch(/^\[stderr\]\nspawn failed: sandbox mode "read-only" is requested but .*\n\n/)
    expect(read.content).toMatch(
      /\n\[sandbox: the sandbox runner itself failed under read-only mode — the command did not run; this is a sandbox problem, not a command failure\]\n\[status: killed, killed before exit\]$/,
    )
    expect(read.job?.sandbox).toMatchObject({ mode: 'read-only', runnerFailed: true, denied: false })
    expect(existsSync(marker)).toBe(false)

    // In the foreground the runner failure is SANDBOX_UNAVAILABLE, and the approval of a retry says so.
    const asked: ApprovalRequest[] = []
    const withApproval = createBashTools({
      executor,
      workspaceRoot: root,
      approval: {
        request: async (r) => {
          asked.push(r)
          return 'rejected'
        },
      },
    })
    const command = `touch ${marker}`
    expect(await withApproval.bash.execute({ command }, { ...call, callId: 'f1' })).toMatchObject({
      isError: true,
      code: 'SANDBOX_UNAVAILABLE',
    })
    await withApproval.bash.execute(
      { command, sandbox_permissions: 'workspace-write', justification: 'the sandbox fails' },
      { ...call, callId: 'f2' },
    )
    expect(asked[0]?.precedingFailure).toMatchObject({
      kind: 'runner-failed',
      callId: 'f1',
      mode: 'read-only',
      paths: [],
      sameCommand: true,
      callsSince: 0,
    })
    expect(existsSync(marker)).toBe(false)
  })
})
