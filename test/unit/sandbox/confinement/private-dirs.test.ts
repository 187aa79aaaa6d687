// A confined run's private dirs that cannot be made are SANDBOX_UNAVAILABLE for its mode, naming
// why and the remedy; a refusal that already is one passes unchanged. The full disk itself:
// test/faults/private-parent-full.test.ts.
import { describe, expect, it } from 'vitest'
import { isSandboxUnavailableError, SandboxUnavailableError } from '../../../../src/policy/errors.js'
import { REMEDY_PRIVATE_DIR } from '../../../../src/policy/remedies.js'
import { withPrivateDirs } from '../../../../src/sandbox/confinement/private-dirs.js'

/** What `body` threw. */
function thrown(body: () => unknown): unknown {
  try {
    body()
  } catch (error) {
    return error
  }
  throw new Error('nothing was thrown')
}

describe('withPrivateDirs', () => {
  it('hands back what was made', () => {
    expect(withPrivateDirs('read-only', () => 'dirs')).toBe('dirs')
  })

  it('a failure to make them is SANDBOX_UNAVAILABLE for the mode, with why, the remedy and the cause', () => {
    const cause = Object.assign(new Error("cordon's private directory /p/sessions ENOSPC"), { code: 'ENOSPC' })
    const error = thrown(() =>
      withPrivateDirs('workspace-write', () => {
        throw cause
      }),
    )
    expect(isSandboxUnavailableError(error)).toBe(true)
    const refusal = error as SandboxUnavailableError
    expect(refusal.mode).toBe('workspace-write')
    expect(refusal.reason).toBe(
      "cordon cannot make its private directories (cordon's private directory /p/sessions ENOSPC)",
    )
    expect(refusal.remedy).toBe(REMEDY_PRIVATE_DIR)
    expect(refusal.cause).toBe(cause)
    expect(refusal.message).toContain('refusing to run the command unconfined')
  })

  it('a refusal that already is SANDBOX_UNAVAILABLE passes unchanged', () => {
    const own = new SandboxUnavailableError('read-only', { reason: 'the TMPDIR cannot shrink' })
    expect(
      thrown(() =>
        withPrivateDirs('workspace-write', () => {
          throw own
        }),
      ),
    ).toBe(own)
  })
})
