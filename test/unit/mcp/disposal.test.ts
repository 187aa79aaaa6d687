// A connection's end over real processes: its owner's running jobs are killed through the jobs
// port (another owner's are not), its calls in flight are waited for, then what it was given is
// disposed; a failure is returned, never thrown.
import { afterAll, describe, expect, it } from 'vitest'
import { CallsInFlight, disposeConnection, killJobsOf } from '../../../src/mcp/disposal.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { InMemoryJobs } from '../../../src/tool/jobs/in-memory.js'
import type { JobOwner } from '../../../src/tool/jobs/port.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-mcp-disposal')
const executor = new LocalShellExecutor({ cwd: root, graceMs: 300 })
const jobs = new InMemoryJobs()
afterAll(() => jobs.dispose())

/** Starts `sleep 60` as a job of `owner`. */
async function sleeper(owner: JobOwner) {
  const spec = executor.resolve({ command: 'exec sleep 60' })
  return jobs.start({ process: executor.start(spec), command: spec.command, workdir: root, owner, callId: 'c' })
}

describe('disposal', () => {
  it('killJobsOf kills the owner’s running jobs and waits for them; another owner’s keep running', async () => {
    const mine = { sessionId: 'mine', agent: 'mcp' }
    const theirs = { sessionId: 'theirs', agent: 'mcp' }
    const [a, b, c] = [await sleeper(mine), await sleeper(mine), await sleeper(theirs)]
    expect(await killJobsOf(jobs, mine)).toEqual([])
    const status = async (id: string, owner: JobOwner) => (await jobs.output(id, owner))?.job.status
    expect([await status(a.id, mine), await status(b.id, mine)]).toEqual(['killed', 'killed'])
    expect(await status(c.id, theirs)).toBe('running')
    await jobs.kill(c.id, theirs)
  })

  it('CallsInFlight knows a call while it runs, refuses a second with its id, and settles', async () => {
    const calls = new CallsInFlight()
    let release: () => void = () => undefined
    const seen: unknown[] = []
    const done = calls.run('7', 7, () => {
      seen.push(calls.requestIdOf('7'))
      return new Promise<void>((r) => {
        release = r
      })
    })
    expect(seen).toEqual([7])
    expect(calls.run('7', 7, async () => undefined)).toBeUndefined()
    let settled = false
    const waiting = calls.settled().then(() => {
      settled = true
    })
    await new Promise((r) => setTimeout(r, 20))
    expect(settled).toBe(false)
    release()
    await Promise.all([done, waiting])
    expect(calls.requestIdOf('7')).toBeUndefined()
  })

  it('disposeConnection: jobs, then calls, then dispose; a failing dispose is returned', async () => {
    const owner = { sessionId: 'conn', agent: 'mcp' }
    const job = await sleeper(owner)
    const order: string[] = []
    const calls = new CallsInFlight()
    calls.run('1', 1, () => new Promise((r) => setTimeout(r, 50)).then(() => order.push('call')))
    const failures = await disposeConnection({
      calls,
      jobs,
      owner,
      dispose: () => {
        order.push('dispose')
        throw new Error('disposal failed')
      },
    })
    expect(order).toEqual(['call', 'dispose'])
    expect((await jobs.output(job.id, owner))?.job.status).toBe('killed')
    expect(failures).toEqual([new Error('disposal failed')])
  })
})
