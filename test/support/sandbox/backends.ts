/**
 * Test gate for real-kernel suites: a suite runs against a usable backend, is skipped locally
 * (with the reason in its title) when the backend is unusable, and FAILS when the backend is
 * named in CORDON_REQUIRE_BACKENDS (CI): a missing backend there is never a skip.
 */
import { afterAll, describe, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { isBackendRequired } from '../../../src/sandbox/require-backends.js'

/** Every backend the escape suite runs for. */
export const TEST_BACKENDS: readonly SandboxBackendName[] = ['landlock', 'bubblewrap']

/** Whether `name` is usable here, why not, and whether CI requires it. */
export async function backendStatus(
  name: SandboxBackendName,
): Promise<{ usable: boolean; reason: string; required: boolean }> {
  const sandbox = await LocalSandbox.create({ backends: [name] })
  const cap = sandbox.capabilities.backends[name]
  await sandbox.dispose()
  return { usable: cap?.usable === true, reason: cap?.reason ?? 'not probed', required: isBackendRequired(name) }
}

/** What a suite does for a backend: run it, skip it (local, unusable), or fail (required by CI, unusable). */
export function gateFor(status: { usable: boolean; required: boolean }): 'run' | 'skip' | 'fail' {
  if (status.usable) return 'run'
  return status.required ? 'fail' : 'skip'
}

/** Throws when `name` is required but unusable; returns false (skip) when merely unusable. */
export async function requireBackend(name: SandboxBackendName): Promise<boolean> {
  const status = await backendStatus(name)
  const gate = gateFor(status)
  if (gate === 'run') return true
  if (gate === 'fail')
    throw new Error(`backend ${name} is required by CORDON_REQUIRE_BACKENDS but unusable: ${status.reason}`)
  return false
}

/** What a test needs of its context to skip itself (vitest's TestContext). */
export interface SkippableContext {
  skip(note?: string): never
}

/**
 * Inside a test: returns when `name` is usable, skips the test with the reason when it merely is
 * not (locally), and throws when CORDON_REQUIRE_BACKENDS requires it (CI). Never a silent return.
 */
export async function needBackend(ctx: SkippableContext, name: SandboxBackendName): Promise<void> {
  const status = await backendStatus(name)
  const gate = gateFor(status)
  if (gate === 'run') return
  if (gate === 'fail')
    throw new Error(`backend ${name} is required by CORDON_REQUIRE_BACKENDS but unusable: ${status.reason}`)
  ctx.skip(`backend ${name} is unusable here: ${status.reason}`)
}

/** A describe block with a sandbox pinned to `name` (disposed after the block), gated as above. */
export async function describeWithBackend(
  name: SandboxBackendName,
  title: string,
  body: (sandbox: () => LocalSandbox) => void,
): Promise<void> {
  const status = await backendStatus(name)
  const gate = gateFor(status)
  if (gate === 'fail') {
    describe(`${title} [${name}]`, () => {
      it(`requires the ${name} backend (CORDON_REQUIRE_BACKENDS)`, () => {
        throw new Error(`backend ${name} is required by CORDON_REQUIRE_BACKENDS but unusable: ${status.reason}`)
      })
    })
    return
  }
  if (gate === 'skip') {
    describe.skipIf(gate === 'skip')(`${title} [${name}] (skipped: ${status.reason})`, () =>
      body(() => {
        throw new Error('unreachable: a skipped suite never asks for its sandbox')
      }),
    )
    return
  }
  const sandbox = await LocalSandbox.create({ backends: [name] })
  describe(`${title} [${name}]`, () => {
    afterAll(() => sandbox.dispose())
    body(() => sandbox)
  })
}
