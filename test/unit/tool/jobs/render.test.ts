// What a model reads about a background job: the new output, a note when some survives only in a
// spill file, the sandbox markers once settled, and the status line last.
import { describe, expect, it } from 'vitest'
import {
  denialMarker,
  ESCALATION_HINT,
  NETWORK_HINT,
  networkDenialMarker,
  runnerFailureMarker,
} from '../../../../src/shell/exit-status.js'
import {
  denialHints,
  droppedOutputNote,
  jobStatusLine,
  NO_NEW_OUTPUT,
  renderJobRead,
} from '../../../../src/tool/jobs/render.js'
import type { JobInfo } from '../../../../src/tool/jobs/port.js'

const job = (over: Partial<JobInfo> = {}): JobInfo => ({
  id: 'job-1',
  command: 'make',
  workdir: '/work',
  owner: { sessionId: 's' },
  callId: 'call-1',
  status: 'completed',
  exitCode: 0,
  signal: null,
  ...over,
})

describe('jobStatusLine', () => {
  it('reads running, completed with its exit code, and killed with its signal or before exit', () => {
    expect(jobStatusLine(job({ status: 'running', exitCode: null }))).toBe('[status: running]')
    expect(jobStatusLine(job({ exitCode: 2 }))).toBe('[status: completed, exit code: 2]')
    expect(jobStatusLine(job({ exitCode: null }))).toBe('[status: completed, exit code: 0]')
    expect(jobStatusLine(job({ status: 'killed', exitCode: null, signal: 'SIGTERM' }))).toBe(
      '[status: killed, signal: SIGTERM]',
    )
    expect(jobStatusLine(job({ status: 'killed', exitCode: null }))).toBe('[status: killed, killed before exit]')
  })
})

describe('droppedOutputNote', () => {
  it('names the spill files that hold the whole output, or says there are none', () => {
    expect(droppedOutputNote({ delta: '', lossy: true, stdoutSpillPath: '/s/out', stderrSpillPath: '/s/err' })).toBe(
      '[some output was dropped from memory; full output: /s/out, /s/err]',
    )
    expect(droppedOutputNote({ delta: '', lossy: true })).toBe(
      '[some output was dropped from memory; full output: (unavailable)]',
    )
  })
})

describe('renderJobRead', () => {
  it('shows the output then the status line, or the no-new-output body', () => {
    expect(renderJobRead(job(), { delta: 'built\n', lossy: false })).toBe('built\n\n[status: completed, exit code: 0]')
    expect(renderJobRead(job({ status: 'running' }), { delta: '', lossy: false })).toBe(
      `${NO_NEW_OUTPUT}\n[status: running]`,
    )
  })

  it('puts the dropped-output note, the sandbox marker, the hint and the notes before the status line', () => {
    const denied = job({ exitCode: 1, sandbox: { mode: 'read-only', denied: true } })
    const read = { delta: 'x', lossy: true, stdoutSpillPath: '/s/out' }
    expect(renderJobRead(denied, read, { escalationHint: true, notes: ['[note]'] }).split('\n')).toEqual([
      'x',
      '[some output was dropped from memory; full output: /s/out]',
      denialMarker('read-only'),
      ESCALATION_HINT,
      '[note]',
      '[status: completed, exit code: 1]',
    ])
    expect(renderJobRead(denied, { delta: 'x', lossy: false }).split('\n')).toEqual([
      'x',
      denialMarker('read-only'),
      '[status: completed, exit code: 1]',
    ])
  })

  it('shows a runner failure instead of a denial', () => {
    const failed = job({ exitCode: 1, sandbox: { mode: 'workspace-write', denied: true, runnerFailed: true } })
    expect(renderJobRead(failed, { delta: '', lossy: false }, { escalationHint: true }).split('\n')).toEqual([
      NO_NEW_OUTPUT,
      runnerFailureMarker('workspace-write'),
      '[status: completed, exit code: 1]',
    ])
  })
})

describe('a job denied for the network', () => {
  const network = { refused: [{ host: 'a.example', port: 443, count: 1, reason: 'not-allowed' as const }], allowed: [] }
  const read = { delta: 'curl: (56)\n', lossy: false } as Parameters<typeof renderJobRead>[1]
  const denied = job({ exitCode: 56, sandbox: { mode: 'read-only', denied: true, deniedFor: ['network'], network } })

  it('shows the network marker (no file marker) and, when hosts can be asked, the hint', () => {
    const text = renderJobRead(denied, read, { escalationHint: true, networkHint: true })
    expect(text).toBe(
      `curl: (56)\n\n${networkDenialMarker(network)}\n${NETWORK_HINT}\n[status: completed, exit code: 56]`,
    )
    expect(text).not.toContain(denialMarker('read-only'))
    expect(renderJobRead(denied, read)).not.toContain(NETWORK_HINT)
  })

  it('denialHints: the hosts hint needs approvals and a confining executor; the mode hint a wider mode', () => {
    const executor = { sandboxMode: 'read-only' } as Parameters<typeof denialHints>[0]['executor']
    const approval = { request: async () => 'rejected' as const }
    expect(denialHints({ approval, executor }, 'read-only')).toEqual({ escalationHint: true, networkHint: true })
    expect(denialHints({ approval, executor }, 'danger-full-access')).toEqual({
      escalationHint: false,
      networkHint: true,
    })
    expect(denialHints({ approval: undefined, executor }, 'read-only')).toEqual({
      escalationHint: false,
      networkHint: false,
    })
    const unsandboxed = { sandboxMode: undefined } as Parameters<typeof denialHints>[0]['executor']
    expect(denialHints({ approval, executor: unsandboxed }, undefined)).toEqual({
      escalationHint: false,
      networkHint: false,
    })
  })
})
