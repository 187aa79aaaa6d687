/**
 * Test support for real terminals: the gate (node-pty loads, or the suite is skipped locally with
 * the reason in its title, and FAILS in CI or under CORDON_REQUIRE_TOOLS), the same gate per
 * sandbox backend for confined terminals, and a screen that collects a terminal's output and
 * waits for text to appear on it.
 */
import { describe, it } from 'vitest'
import type { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { loadPty } from '../../../src/subprocess/terminal/pty.js'
import { describeWithBackend, TEST_BACKENDS } from '../sandbox/backends.js'

/** Whether node-pty loads here, why not, and whether this environment requires it. */
export async function ptyStatus(): Promise<{ usable: boolean; reason: string; required: boolean }> {
  const required = Boolean(process.env.CI || process.env.CORDON_REQUIRE_TOOLS)
  try {
    await loadPty()
    return { usable: true, reason: '', required }
  } catch (error) {
    return { usable: false, reason: error instanceof Error ? error.message : String(error), required }
  }
}

/** A describe block over real ptys: run, skip (reason in the title), or fail when required. */
export async function describePty(title: string, body: () => void): Promise<void> {
  const status = await ptyStatus()
  if (status.usable) {
    describe(title, body)
  } else if (status.required) {
    describe(title, () => {
      it('requires node-pty (CI / CORDON_REQUIRE_TOOLS)', () => {
        throw new Error(`node-pty is required here but does not load: ${status.reason}`)
      })
    })
  } else {
    // Not usable here and not required: one test that skips itself, saying why.
    describe(title, () => {
      it('needs node-pty', (ctx) => ctx.skip(`node-pty does not load here: ${status.reason}`))
    })
  }
}

/**
 * One describe block per backend over real ptys, each with a sandbox pinned to it: gated on
 * node-pty (as describePty) and on the backend (as describeWithBackend, which fails under
 * CORDON_REQUIRE_BACKENDS when the backend is unusable).
 */
export async function describeConfinedTerminals(
  title: string,
  body: (backend: SandboxBackendName, sandbox: () => LocalSandbox) => void,
): Promise<void> {
  const status = await ptyStatus()
  if (!status.usable) {
    const unreachable = (): LocalSandbox => {
      throw new Error('unreachable: a skipped suite never asks for its sandbox')
    }
    await describePty(title, () => {
      for (const name of TEST_BACKENDS) describe(name, () => body(name, unreachable))
    })
    return
  }
  for (const name of TEST_BACKENDS) await describeWithBackend(name, title, (sandbox) => body(name, sandbox))
}

/** Anything with node-pty's onData shape. */
interface DataSource {
  onData(listener: (text: string) => void): { dispose(): void }
}

/** Everything a terminal printed, and waits for what it will print. */
export class Screen {
  text = ''
  readonly chunks: string[] = []
  private readonly subscription: { dispose(): void }

  constructor(source: DataSource) {
    this.subscription = source.onData((chunk) => {
      this.chunks.push(chunk)
      this.text += chunk
    })
  }

  /** Resolves with the first match of `pattern` printed after offset `from`; rejects after `ms` showing the screen. */
  async waitFor(pattern: RegExp | string, ms = 10_000, from = 0): Promise<RegExpMatchArray> {
    const re = typeof pattern === 'string' ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : pattern
    const deadline = Date.now() + ms
    for (;;) {
      const match = this.text.slice(from).match(re)
      if (match) return match
      if (Date.now() > deadline)
        throw new Error(`timed out after ${ms} ms waiting for ${re} on the screen:\n${JSON.stringify(this.text)}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  /** Marks the current end of the screen (for waits on what comes next). */
  mark(): number {
    return this.text.length
  }

  /** Stops collecting. */
  dispose(): void {
    this.subscription.dispose()
  }
}

/** Polls `probe` until it returns a value that satisfies `ok`, or `ms` passes (then returns the last value). */
export async function until<T>(probe: () => Promise<T> | T, ok: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (ok(value) || Date.now() > deadline) return value
    await new Promise((r) => setTimeout(r, 20))
  }
}
