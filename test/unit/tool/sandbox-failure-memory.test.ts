// What an approval says a retry follows: each owner's last sandbox failure and the calls since,
// bounded by forgetting the least recently active owners.
import { describe, expect, it } from 'vitest'
import { failureOf, type SandboxFailure, SandboxFailureMemory } from '../../../src/tool/sandbox-failure-memory.js'

const call = { callId: 'call-1', command: 'touch /etc/x', workdir: '/work' }
const denial = (over: Partial<SandboxFailure> = {}): SandboxFailure => ({
  kind: 'denied',
  callId: 'call-1',
  command: 'touch /etc/x',
  workdir: '/work',
  mode: 'workspace-write',
  paths: ['/etc/x'],
  jobId: undefined,
  ...over,
})

describe('failureOf', () => {
  it('reads a denial with its paths, a runner failure without, and nothing from a clean run', () => {
    expect(failureOf({ mode: 'workspace-write', denied: true, deniedPaths: ['/etc/x'] }, call)).toEqual(denial())
    expect(failureOf({ mode: 'read-only', denied: true, runnerFailed: true }, { ...call, jobId: 'j' })).toEqual(
      denial({ kind: 'runner-failed', mode: 'read-only', paths: [], jobId: 'j' }),
    )
    expect(failureOf({ mode: 'read-only', denied: false }, call)).toBeUndefined()
    expect(failureOf(undefined, call)).toBeUndefined()
  })
})

describe('SandboxFailureMemory', () => {
  const owner = { sessionId: 's1', agent: 'a' }

  it('has nothing for an owner that met no failure', () => {
    const memory = new SandboxFailureMemory()
    memory.noteCall(owner)
    expect(memory.precedingFailure(owner, 'ls')).toBeUndefined()
  })

  it('says whether a retry is the same command and how many calls came since', () => {
    const memory = new SandboxFailureMemory()
    memory.record(owner, denial())
    expect(memory.precedingFailure(owner, 'touch /etc/x')).toEqual({ ...denial(), sameCommand: true, callsSince: 0 })
    memory.noteCall(owner)
    memory.noteCall(owner)
    expect(memory.precedingFailure(owner, 'ls')).toMatchObject({ sameCommand: false, callsSince: 2 })
    expect(memory.precedingFailure({ sessionId: 's1', agent: 'b' }, 'touch /etc/x')).toBeUndefined()
  })

  it("does not count a background job's failure twice", () => {
    const memory = new SandboxFailureMemory()
    memory.record(owner, denial({ jobId: 'j1' }))
    memory.noteCall(owner)
    memory.record(owner, denial({ jobId: 'j1' }))
    expect(memory.precedingFailure(owner, 'touch /etc/x')).toMatchObject({ jobId: 'j1', callsSince: 1 })
    memory.record(owner, denial({ jobId: 'j2' }))
    expect(memory.precedingFailure(owner, 'touch /etc/x')).toMatchObject({ jobId: 'j2', callsSince: 0 })
  })

  it('forgets the least recently active owner first', () => {
    const memory = new SandboxFailureMemory(2)
    const a = { sessionId: 'a' }
    const b = { sessionId: 'b' }
    const c = { sessionId: 'c' }
    memory.record(a, denial())
    memory.record(b, denial())
    memory.noteCall(a)
    memory.record(c, denial())
    expect(memory.precedingFailure(a, 'x')).toBeDefined()
    expect(memory.precedingFailure(b, 'x')).toBeUndefined()
    expect(memory.precedingFailure(c, 'x')).toBeDefined()
  })
})

describe('failureOf under a network allow-list', () => {
  const refused = [{ host: 'a.example', port: 443, count: 1, reason: 'not-allowed' as const }]
  it('a denial for the network carries the refused destinations; a run not denied for it does not', () => {
    const network = { refused, allowed: [] }
    expect(failureOf({ mode: 'read-only', denied: true, deniedFor: ['network'], network }, call)).toEqual(
      denial({ mode: 'read-only', paths: [], refused }),
    )
    expect(
      failureOf({ mode: 'read-only', denied: true, deniedFor: ['files'], deniedPaths: ['/etc/x'], network }, call),
    ).toEqual(denial({ mode: 'read-only' }))
    expect(failureOf({ mode: 'read-only', denied: false, network }, call)).toBeUndefined()
  })
})
