// Backend choice as a pure decision: the probe's verdicts and one policy in, the backend (or
// SANDBOX_UNAVAILABLE with why and what to do) out. The first `full` backend of the chain wins,
// else the first usable `partial` one unless the policy demands `full`.
import { describe, expect, it } from 'vitest'
import type {
  BackendCapability,
  EnforcementAccount,
  SandboxBackendName,
  SandboxCapabilities,
} from '../../../src/policy/backends.js'
import {
  DEFAULT_SANDBOX_REMEDY,
  isSandboxUnavailableError,
  type SandboxUnavailableError,
} from '../../../src/policy/errors.js'
import type { SandboxPolicy } from '../../../src/policy/vocabulary.js'
import { type AccountOf, selectBackend } from '../../../src/sandbox/select.js'

const FULL: EnforcementAccount = { enforcement: 'full', classes: {}, governed: ['content'], ungoverned: [] }
const PARTIAL: EnforcementAccount = {
  enforcement: 'partial',
  classes: { metadata: { governed: false, how: 'chmod outside the roots is not a Landlock right' } },
  governed: ['content'],
  ungoverned: ['metadata'],
}

function capability(backend: SandboxBackendName, usable: boolean, extra: Partial<BackendCapability> = {}) {
  return { backend, usable, limitations: [], probeMs: 1, ...extra } satisfies BackendCapability
}

function caps(
  chain: SandboxBackendName[],
  backends: Partial<Record<SandboxBackendName, BackendCapability>>,
): SandboxCapabilities {
  return { platform: 'linux', chain, backends }
}

const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: '/work' }

/** An accountOf that gives each backend a fixed account and records who was asked. */
function accounts(table: Partial<Record<SandboxBackendName, EnforcementAccount>>): AccountOf & { asked: string[] } {
  const asked: string[] = []
  const fn = (name: SandboxBackendName) => {
    asked.push(name)
    return table[name] ?? FULL
  }
  return Object.assign(fn, { asked })
}

function refusal(fn: () => unknown): SandboxUnavailableError {
  try {
    fn()
  } catch (error) {
    expect(isSandboxUnavailableError(error)).toBe(true)
    return error as SandboxUnavailableError
  }
  throw new Error('expected SANDBOX_UNAVAILABLE')
}

describe('selectBackend', () => {
  const both = caps(['landlock', 'bubblewrap'], {
    landlock: capability('landlock', true),
    bubblewrap: capability('bubblewrap', true),
  })

  it('the first backend of the chain that enforces the policy fully wins; later ones are not asked', () => {
    const accountOf = accounts({})
    const choice = selectBackend(both, policy, accountOf)
    expect(choice).toMatchObject({ backend: 'landlock', enforcement: 'full', account: FULL })
    expect(choice.capability).toBe(both.backends.landlock)
    expect(accountOf.asked).toEqual(['landlock'])
  })

  it('a full backend later in the chain beats a partial one earlier', () => {
    const choice = selectBackend(both, policy, accounts({ landlock: PARTIAL }))
    expect(choice).toMatchObject({ backend: 'bubblewrap', enforcement: 'full' })
  })

  it('the order of the chain is the preference', () => {
    const reversed = caps(['bubblewrap', 'landlock'], both.backends)
    expect(selectBackend(reversed, policy, accounts({})).backend).toBe('bubblewrap')
  })

  it('with only partial backends, the first partial one runs (reported partial)', () => {
    const choice = selectBackend(both, policy, accounts({ landlock: PARTIAL, bubblewrap: PARTIAL }))
    expect(choice).toMatchObject({ backend: 'landlock', enforcement: 'partial', account: PARTIAL })
  })

  it('a policy that demands full refuses partial backends, naming each ungoverned class and how', () => {
    const withRemedy = caps(['landlock'], {
      landlock: capability('landlock', true, { remedy: 'use bubblewrap for full' }),
    })
    const error = refusal(() =>
      selectBackend(withRemedy, { ...policy, requireEnforcement: 'full' }, accounts({ landlock: PARTIAL })),
    )
    expect(error.mode).toBe('workspace-write')
    expect(error.reason).toBe(
      'the policy requires full enforcement and no backend gives it (landlock: metadata (chmod outside the roots is not a Landlock right))',
    )
    expect(error.remedy).toBe('use bubblewrap for full')
  })

  it('unusable backends are skipped without being asked, with their reasons and remedies', () => {
    const accountOf = accounts({})
    const oneUsable = caps(['landlock', 'bubblewrap'], {
      landlock: capability('landlock', false, { reason: 'no Landlock', remedy: 'boot 6.12' }),
      bubblewrap: capability('bubblewrap', true),
    })
    expect(selectBackend(oneUsable, policy, accountOf).backend).toBe('bubblewrap')
    expect(accountOf.asked).toEqual(['bubblewrap'])
  })

  it('nothing usable: SANDBOX_UNAVAILABLE with every reason, and the remedies once each', () => {
    const none = caps(['landlock', 'bubblewrap'], {
      landlock: capability('landlock', false, { reason: 'no Landlock', remedy: 'install bubblewrap' }),
      bubblewrap: capability('bubblewrap', false, { reason: 'bwrap missing', remedy: 'install bubblewrap' }),
    })
    const error = refusal(() => selectBackend(none, policy, accounts({})))
    expect(error.reason).toBe(
      'no sandbox backend is usable on this host (landlock: no Landlock; bubblewrap: bwrap missing)',
    )
    expect(error.remedy).toBe('install bubblewrap')
    expect(error.message).toContain('refusing to run the command unconfined')
  })

  it('a backend of the chain that was never probed counts as unusable', () => {
    const error = refusal(() => selectBackend(caps(['bubblewrap'], {}), policy, accounts({})))
    expect(error.reason).toContain('bubblewrap: not probed')
    expect(error.remedy).toBe(DEFAULT_SANDBOX_REMEDY)
  })

  it('an empty chain says no backend is configured for this platform', () => {
    const error = refusal(() => selectBackend(caps([], {}), { ...policy, mode: 'read-only' }, accounts({})))
    expect(error).toMatchObject({
      mode: 'read-only',
      reason: `no sandbox backend is configured for this platform (${process.platform})`,
    })
  })
})
