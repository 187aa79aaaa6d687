// The refusal log: every run numbered, only runs with refusals kept, bounded, read per owner.
import { describe, expect, it } from 'vitest'
import { MAX_LOGGED_RUNS, type NotedRun, RefusalLog } from '../../../../src/sandbox/refusal-log/log.js'

const denied = (command: string, owner: Partial<NotedRun> = {}): NotedRun => ({
  command,
  workdir: '/w',
  background: false,
  facts: { mode: 'read-only', denied: true, backend: 'landlock', deniedPaths: ['/w/f'], refusedPaths: ['/w/f'] },
  ...owner,
})
const clean = (command: string): NotedRun => ({
  command,
  workdir: '/w',
  background: false,
  facts: { mode: 'read-only', denied: false },
})

describe('RefusalLog', () => {
  it('numbers every run but keeps only those with refusals, with their facts and owner', () => {
    const log = new RefusalLog()
    expect(log.note(clean('true'))).toBeUndefined()
    const at = new Date('2026-12-02T10:00:00Z')
    const entry = log.note(denied('touch f', { sessionId: 's', agent: 'a', callId: 'c' }), at)
    expect(entry).toEqual({
      run: 2,
      time: '2026-12-02T10:00:00.000Z',
      command: 'touch f',
      workdir: '/w',
      mode: 'read-only',
      backend: 'landlock',
      background: false,
      sessionId: 's',
      agent: 'a',
      callId: 'c',
      failed: true,
      refusals: [{ kind: 'path', path: '/w/f', operation: 'write' }],
    })
    expect(log.read()).toMatchObject({ lastRun: 2, dropped: 0, entries: [{ run: 2 }] })
  })

  it('ignores unconfined runs and runs without facts', () => {
    const log = new RefusalLog()
    log.note({ ...denied('x'), facts: undefined })
    log.note({ ...denied('y'), facts: { mode: 'danger-full-access', denied: true, deniedPaths: ['/etc/x'] } })
    expect(log.read()).toEqual({ entries: [], dropped: 0, lastRun: 2 })
  })

  it('reads one owner, after a run, the newest `limit`', () => {
    const log = new RefusalLog()
    log.note(denied('a1', { sessionId: 'a' }))
    log.note(denied('b1', { sessionId: 'b' }))
    log.note(denied('a2', { sessionId: 'a' }))
    log.note(denied('anon'))
    const commands = (q: Parameters<RefusalLog['read']>[0]) => log.read(q).entries.map((e) => e.command)
    expect(commands({ owner: { sessionId: 'a' } })).toEqual(['a1', 'a2'])
    expect(commands({ owner: {} })).toEqual(['anon'])
    expect(commands({ owner: { sessionId: 'a', agent: 'other' } })).toEqual([])
    expect(commands({ afterRun: 2 })).toEqual(['a2', 'anon'])
    expect(commands({ limit: 1 })).toEqual(['anon'])
    expect(commands({ limit: 0 })).toEqual([])
  })

  it('keeps the newest MAX_LOGGED_RUNS and counts the dropped', () => {
    const log = new RefusalLog()
    for (let i = 0; i < MAX_LOGGED_RUNS + 3; i++) log.note(denied(`c${i}`))
    const read = log.read()
    expect(read.entries).toHaveLength(MAX_LOGGED_RUNS)
    expect(read.entries[0]?.command).toBe('c3')
    expect(read.dropped).toBe(3)
  })

  it('hands out copies: changing a read does not change the log', () => {
    const log = new RefusalLog()
    log.note(denied('touch f'))
    const first = log.read().entries[0]
    if (first === undefined) throw new Error('no entry')
    first.refusals.length = 0
    first.command = 'changed'
    expect(log.read().entries[0]).toMatchObject({ command: 'touch f', refusals: [{ path: '/w/f' }] })
  })
})
