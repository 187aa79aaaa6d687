// The schema of `cordon run --json`'s output: the same fields as ShellRunResult (checked by the
// compiler), closed everywhere (a renamed, missing or extra field fails), and its JSON Schema
// (draft 2020-12) judging as the zod schema does. test/e2e/cli/output/json-schema.test.ts holds it
// to real runs.
import { describe, expect, it } from 'vitest'
import { type RunOutputResult, runOutputJsonSchema, runOutputSchemas } from '../../../../src/cli/schema/run-output.js'
import type { CollectedOutput, ShellRunResult, ShellSandboxInfo } from '../../../../src/shell/types.js'
import { validatorOf } from '../../../support/json-schema.js'

type Mutable<T> =
  T extends ReadonlyArray<infer U> ? Mutable<U>[] : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type SandboxOutput = NonNullable<RunOutputResult['sandbox']>

// The compiler's half: the same field names, and every result's fields fit the schema's types
// (`backend` is a string in the type; in a run's output it is one of the backends' names).
const sameFields: [
  Same<keyof ShellRunResult, keyof RunOutputResult>,
  Same<keyof ShellSandboxInfo, keyof SandboxOutput>,
  Same<keyof CollectedOutput, keyof RunOutputResult['stdout']>,
] = [true, true, true]
const fits = (r: Omit<Mutable<ShellRunResult>, 'sandbox'>): Omit<RunOutputResult, 'sandbox'> => r
const sandboxFits = (s: Omit<Mutable<ShellSandboxInfo>, 'backend'>): Omit<SandboxOutput, 'backend'> => s

/** A result with every field there is, optional ones too. */
function fullResult(): Record<string, unknown> {
  return {
    exitCode: null,
    signal: 'SIGKILL',
    timedOut: false,
    aborted: false,
    timeoutMs: 1000,
    stdout: { text: 'tail', truncated: true, spillPath: '/run/user/0/cordon/cli-spill/x' },
    stderr: { text: '', truncated: false },
    sandbox: {
      mode: 'read-only',
      denied: true,
      enforcement: 'partial',
      runnerFailed: false,
      backend: 'landlock',
      deniedPaths: ['/etc/x'],
      network: {
        refused: [{ host: 'evil.example', port: 443, count: 2, reason: 'not-allowed' }],
        refusedOmitted: 0,
        allowed: [{ host: 'ok.example', port: 443, connections: 1, bytesSent: 10, bytesReceived: 20 }],
        allowedOmitted: 0,
      },
      deniedFor: ['files', 'network'],
      refusedPaths: ['/etc/x'],
      refusalSource: 'messages',
      closedClasses: [{ class: 'shared-memory', evidence: 'sem_open refused', remedy: '--shared-memory' }],
      removedEnv: ['GITHUB_TOKEN'],
    },
  }
}

/** A full result with `edit` applied to the object at `path` in it. */
function changed(path: Array<string | number>, edit: (o: Record<string, unknown>) => void): Record<string, unknown> {
  const r = fullResult()
  let node: unknown = r
  for (const key of path) node = (node as Record<string | number, unknown>)[key]
  edit(node as Record<string, unknown>)
  return r
}

/** `o` with field `from` renamed `to`. */
const rename = (from: string, to: string) => (o: Record<string, unknown>) => {
  o[to] = o[from]
  delete o[from]
}

describe('the run output schema', () => {
  const validate = validatorOf(runOutputJsonSchema())
  const zodAccepts = (value: unknown) => runOutputSchemas().output.safeParse(value).success

  it('has the fields of ShellRunResult (the compiler checks; these run it)', () => {
    expect(sameFields).toEqual([true, true, true])
    const r = {
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
      timeoutMs: 1,
      stdout: { text: '', truncated: false },
      stderr: { text: '', truncated: false },
    }
    expect(fits(r)).toBe(r)
    expect(sandboxFits({ mode: 'read-only', denied: false })).toEqual({ mode: 'read-only', denied: false })
  })

  it('is JSON Schema draft 2020-12, closed wherever the output is', () => {
    const schema = runOutputJsonSchema()
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    const objects: Array<Record<string, unknown>> = []
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node !== null && typeof node === 'object') {
        if ((node as { type?: unknown }).type === 'object') objects.push(node as Record<string, unknown>)
        Object.values(node).forEach(walk)
      }
    }
    walk(schema)
    expect(objects.length).toBeGreaterThanOrEqual(9)
    for (const o of objects) expect(o.additionalProperties).toBe(false)
  })

  it('accepts a full result, a bare one, and an error', () => {
    const bare = {
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
      timeoutMs: 120000,
      stdout: { text: '', truncated: false },
      stderr: { text: '', truncated: false },
    }
    const error = { error: { name: 'UsageError', code: 'CORDON_USAGE', message: 'x' } }
    for (const value of [fullResult(), bare, error]) {
      expect(validate(value)).toEqual([])
      expect(zodAccepts(value)).toBe(true)
    }
  })

  it('refuses a renamed, missing or extra field, a wrong enum or an impossible number', () => {
    const bad = [
      changed([], rename('exitCode', 'exit_code')),
      changed([], (o) => delete o.timedOut),
      changed([], (o) => Object.assign(o, { extra: 1 })),
      changed(['stdout'], rename('spillPath', 'spill')),
      changed(['sandbox'], rename('deniedPaths', 'deniedPath')),
      changed(['sandbox', 'network', 'refused', 0], (o) => Object.assign(o, { why: 'x' })),
      changed(['sandbox', 'closedClasses', 0], rename('remedy', 'flags')),
      changed(['sandbox'], (o) => Object.assign(o, { mode: 'yolo' })),
      changed(['sandbox'], (o) => Object.assign(o, { backend: 'chroot' })),
      changed([], (o) => Object.assign(o, { signal: 'KILL' })),
      changed([], (o) => Object.assign(o, { exitCode: 256 })),
      changed([], (o) => Object.assign(o, { timeoutMs: 3_000_000_000 })),
      { error: { name: 'UsageError', code: 'CORDON_USAGE' } },
      { error: { name: 'E', code: 'lower', message: 'x' } },
    ]
    for (const value of bad) {
      expect(validate(value), JSON.stringify(value)).not.toEqual([])
      expect(zodAccepts(value)).toBe(false)
    }
  })
})
