import { describe, expect, it } from 'vitest'
import { SANDBOX_MODES } from '../../../src/policy/vocabulary.js'
import {
  APPROVAL_OUTCOMES,
  ESCALATION_TARGETS,
  ESCALATION_TEXTS,
  WIDER_MODES,
  escalationOutcome,
  isEscalationTarget,
  isStrictlyWider,
  narrowestWiderMode,
  validateEscalationArgs,
  wideningError,
  type ApprovalOutcome,
} from '../../../src/policy/widen.js'
import { invalid } from '../../support/invalid.js'

describe('the widening ladder', () => {
  it('read-only can go to either wider mode, workspace-write only to full access', () => {
    expect(isStrictlyWider('read-only', 'workspace-write')).toBe(true)
    expect(isStrictlyWider('read-only', 'danger-full-access')).toBe(true)
    expect(isStrictlyWider('workspace-write', 'danger-full-access')).toBe(true)
    expect(WIDER_MODES['danger-full-access']).toEqual([])
  })

  it('no mode is strictly wider than itself or than a wider one', () => {
    for (const m of SANDBOX_MODES) expect(isStrictlyWider(m, m)).toBe(false)
    expect(isStrictlyWider('workspace-write', 'read-only')).toBe(false)
    expect(isStrictlyWider('danger-full-access', 'read-only')).toBe(false)
    expect(isStrictlyWider('danger-full-access', 'workspace-write')).toBe(false)
  })

  it('unknown modes are never wider nor widened', () => {
    expect(isStrictlyWider('read-only', 'root')).toBe(false)
    expect(isStrictlyWider('sudo', 'danger-full-access')).toBe(false)
    expect(isStrictlyWider('read-only', '')).toBe(false)
  })

  it('agrees with the order of SANDBOX_MODES', () => {
    for (const [i, from] of SANDBOX_MODES.entries()) {
      for (const [j, to] of SANDBOX_MODES.entries()) expect(isStrictlyWider(from, to)).toBe(j > i)
    }
  })

  it('names the narrowest wider mode', () => {
    expect(narrowestWiderMode('read-only')).toBe('workspace-write')
    expect(narrowestWiderMode('workspace-write')).toBe('danger-full-access')
    expect(narrowestWiderMode('danger-full-access')).toBeUndefined()
  })

  it('the target enum is the closed set of the two wider modes', () => {
    expect(ESCALATION_TARGETS).toEqual(['workspace-write', 'danger-full-access'])
    expect(isEscalationTarget('read-only')).toBe(false)
    expect(isEscalationTarget('danger-full-access')).toBe(true)
  })

  it('a non-widening request fails with the exact text', () => {
    expect(wideningError('workspace-write', 'workspace-write')).toBe(
      'sandbox escalation to "workspace-write" is not strictly wider than this call\'s current "workspace-write" mode',
    )
    expect(wideningError('danger-full-access', 'read-only')).toBe(
      'sandbox escalation to "read-only" is not strictly wider than this call\'s current "danger-full-access" mode',
    )
    expect(wideningError('read-only', 'workspace-write')).toBeUndefined()
  })
})

describe('escalation pairing', () => {
  it('neither field is no escalation', () => {
    expect(validateEscalationArgs({})).toEqual({ ok: true, escalation: undefined })
  })

  it('both fields are an escalation', () => {
    expect(
      validateEscalationArgs({ sandbox_permissions: 'workspace-write', justification: 'needs to write build/' }),
    ).toEqual({
      ok: true,
      escalation: { mode: 'workspace-write', justification: 'needs to write build/' },
    })
  })

  it('each pairing failure has its exact text', () => {
    expect(validateEscalationArgs({ sandbox_permissions: 'workspace-write' })).toEqual({
      ok: false,
      error: 'invalid escalation: sandbox_permissions requires a justification',
    })
    expect(validateEscalationArgs({ justification: 'because' })).toEqual({
      ok: false,
      error: 'invalid escalation: justification is only valid together with sandbox_permissions or additional_hosts',
    })
    for (const blank of ['', '   ', '\n\t']) {
      expect(validateEscalationArgs({ sandbox_permissions: 'workspace-write', justification: blank })).toEqual({
        ok: false,
        error: 'invalid justification: expected a non-empty sentence',
      })
    }
  })

  it('a target outside the closed set is refused', () => {
    const check = validateEscalationArgs({ sandbox_permissions: 'read-only', justification: 'x' })
    expect(check.ok).toBe(false)
  })

  it('the other texts are exact', () => {
    expect(ESCALATION_TEXTS.notAvailable).toBe(
      'sandbox_permissions is not available in this composition (no sandboxing executor to escalate)',
    )
    expect(ESCALATION_TEXTS.noApprovalService('workspace-write')).toBe(
      'sandbox escalation to "workspace-write" requires approval, but no approval service is composed',
    )
    expect(ESCALATION_TEXTS.noAgent('danger-full-access')).toBe(
      'sandbox escalation to "danger-full-access" requires approval, but the call has no agent to route it through',
    )
    expect(ESCALATION_TEXTS.approvalReason('workspace-write', 'write the lockfile')).toBe(
      'escalate sandbox to workspace-write: write the lockfile',
    )
  })
})

describe('approval outcomes', () => {
  it('a grant returns the mode', () => {
    expect(escalationOutcome('workspace-write', 'allowed-once')).toEqual({ granted: true, mode: 'workspace-write' })
  })

  it('each non-grant outcome produces its own text', () => {
    expect(escalationOutcome('workspace-write', 'rejected')).toEqual({
      granted: false,
      error: 'the user rejected escalating this command to "workspace-write"',
    })
    expect(escalationOutcome('danger-full-access', 'cancelled')).toEqual({
      granted: false,
      error: 'approval for escalating to "danger-full-access" was cancelled',
    })
    expect(escalationOutcome('workspace-write', 'unavailable')).toEqual({
      granted: false,
      error: 'sandbox escalation to "workspace-write" requires approval, but no approval channel is available',
    })
    const texts = APPROVAL_OUTCOMES.map((o) => JSON.stringify(escalationOutcome('workspace-write', o)))
    expect(new Set(texts).size).toBe(APPROVAL_OUTCOMES.length)
  })

  it('an outcome outside the closed set trips the exhaustiveness guard', () => {
    invalid(() => escalationOutcome('workspace-write', 'allowed-always' as ApprovalOutcome))
  })
})

describe('escalation pairing with additional_hosts', () => {
  it('hosts with a justification are an escalation, normalized and sorted; with a mode, both', () => {
    expect(validateEscalationArgs({ additional_hosts: ['B.example', 'a.example'], justification: 'fetch' })).toEqual({
      ok: true,
      escalation: { hosts: ['a.example', 'b.example'], justification: 'fetch' },
    })
    expect(
      validateEscalationArgs({
        sandbox_permissions: 'workspace-write',
        additional_hosts: ['registry.npmjs.org'],
        justification: 'npm install',
      }),
    ).toEqual({
      ok: true,
      escalation: { mode: 'workspace-write', hosts: ['registry.npmjs.org'], justification: 'npm install' },
    })
  })

  it('hosts need a justification; a justification needs a mode or hosts; bad hosts are all named', () => {
    expect(validateEscalationArgs({ additional_hosts: ['a.example'] })).toEqual({
      ok: false,
      error: 'invalid escalation: additional_hosts requires a justification',
    })
    expect(validateEscalationArgs({ justification: 'x' })).toEqual({
      ok: false,
      error: ESCALATION_TEXTS.justificationWithoutPermissions,
    })
    expect(validateEscalationArgs({ additional_hosts: ['a.example'], justification: ' ' })).toEqual({
      ok: false,
      error: 'invalid justification: expected a non-empty sentence',
    })
    const bad = validateEscalationArgs({ additional_hosts: ['ok.example', 'a b', '*'], justification: 'x' })
    expect(bad).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^invalid additional_hosts, nothing ran: "a b": .*; "\*": /),
    })
    expect(validateEscalationArgs({ additional_hosts: [], justification: 'x' })).toMatchObject({ ok: false })
    expect(validateEscalationArgs({ additional_hosts: 'a.example', justification: 'x' })).toEqual({
      ok: false,
      error: 'invalid additional_hosts: expected a list of host patterns',
    })
  })
})
