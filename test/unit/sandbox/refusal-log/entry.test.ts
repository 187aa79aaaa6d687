// What a run's facts make of its refusals: writes first, other denied paths as `unknown`, the
// proxy's refused hosts as connections, closed classes; bounded, with what is cut counted.
import { describe, expect, it } from 'vitest'
import {
  LOGGED_COMMAND_CHARS,
  loggedCommand,
  REFUSALS_PER_ENTRY,
  refusalsOf,
} from '../../../../src/sandbox/refusal-log/entry.js'

describe('refusalsOf', () => {
  it('lists writes, then other denied paths, hosts and classes, each path once', () => {
    const { refusals, omitted } = refusalsOf({
      mode: 'workspace-write',
      denied: true,
      refusedPaths: ['/etc/a', '/etc/a', '/etc/b'],
      deniedPaths: ['/etc/b', '/root/.ssh/id'],
      network: { refused: [{ host: 'evil.test', port: 443, count: 2, reason: 'not-allowed' }], allowed: [] },
      closedClasses: [{ class: 'shared-memory', evidence: 'sem_open refused', remedy: '--shared-memory' }],
    })
    expect(omitted).toBe(0)
    expect(refusals).toEqual([
      { kind: 'path', path: '/etc/a', operation: 'write' },
      { kind: 'path', path: '/etc/b', operation: 'write' },
      { kind: 'path', path: '/root/.ssh/id', operation: 'unknown' },
      { kind: 'host', host: 'evil.test', port: 443, operation: 'connect', reason: 'not-allowed', count: 2 },
      {
        kind: 'class',
        class: 'shared-memory',
        operation: 'unknown',
        evidence: 'sem_open refused',
        remedy: '--shared-memory',
      },
    ])
  })

  it('keeps REFUSALS_PER_ENTRY and counts the rest, the hosts the proxy did not itemize too', () => {
    const paths = Array.from({ length: REFUSALS_PER_ENTRY + 5 }, (_, i) => `/etc/f${i}`)
    const { refusals, omitted } = refusalsOf({
      mode: 'read-only',
      denied: false,
      refusedPaths: paths,
      network: { refused: [], refusedOmitted: 3, allowed: [] },
    })
    expect(refusals).toHaveLength(REFUSALS_PER_ENTRY)
    expect(omitted).toBe(8)
  })

  it('finds nothing in facts without refusals', () => {
    expect(refusalsOf({ mode: 'read-only', denied: false })).toEqual({ refusals: [], omitted: 0 })
  })
})

describe('loggedCommand', () => {
  it('keeps a short command and cuts a long one with an ellipsis', () => {
    expect(loggedCommand('ls')).toBe('ls')
    const cut = loggedCommand('x'.repeat(LOGGED_COMMAND_CHARS + 10))
    expect(cut).toHaveLength(LOGGED_COMMAND_CHARS)
    expect(cut.endsWith('…')).toBe(true)
  })
})
