// The classes every confined run promises, as each backend's account counts them, and the account
// of a run that joins no cgroup leaves.
import { describe, expect, it } from 'vitest'
import {
  accountOf,
  limitVerdicts,
  promisedClasses,
  withoutCgroupLeaves,
  yes,
} from '../../../../src/sandbox/confinement/account.js'

describe('promised classes', () => {
  it('every confined run promises the process, IPC, keyring, terminal and lifetime classes', () => {
    expect(promisedClasses({ mode: 'read-only' })).toEqual([
      'content',
      'names',
      'metadata',
      'processes',
      'ipc',
      'keyrings',
      'terminals',
      'lifetime',
    ])
    expect(promisedClasses({ mode: 'read-only', network: 'deny', limits: { processes: 10 } })).toEqual(
      expect.arrayContaining(['network', 'resources']),
    )
  })
})

describe('an account without cgroup leaves (a confined terminal)', () => {
  const GIB = 1024 ** 3
  const bounds = { cgroups: { pids: true, memory: true, cpu: true }, memsw: true, memory: 8 * GIB }
  const limits = { memoryBytes: GIB, processes: 50 }
  const facts = { bounds, uid0: true }
  const promised = [...promisedClasses({ mode: 'read-only', limits })]
  const run = accountOf(
    { ...Object.fromEntries(promised.map((c) => [c, yes('held')])), ...limitVerdicts(facts, limits) },
    promised,
  )

  it('a run with its leaves holds memory and processes; the same plan in a terminal holds neither', () => {
    expect(run.enforcement).toBe('full')
    const terminal = withoutCgroupLeaves(run, limits, facts)
    expect(terminal.enforcement).toBe('partial')
    expect(terminal.ungoverned).toEqual(expect.arrayContaining(['memory', 'resources']))
    expect(terminal.classes.memory?.how).toMatch(/^not governed/)
    // The temp tmpfs is the session's, not the run's: a terminal has it too.
    expect(terminal.classes.temp).toEqual(run.classes.temp)
    expect(terminal.governed).toEqual(expect.arrayContaining(['content', 'lifetime']))
  })

  it('promises nothing new: a policy without limits keeps its verdict', () => {
    const bare = accountOf(Object.fromEntries(promisedClasses({ mode: 'read-only' }).map((c) => [c, yes('held')])), [
      ...promisedClasses({ mode: 'read-only' }),
    ])
    const terminal = withoutCgroupLeaves(bare, undefined, facts)
    expect(terminal.enforcement).toBe('full')
    expect(terminal.classes.memory).toBeUndefined()
  })
})
