// The shell executor (src/shell/executor.ts:LocalShellExecutor) under 10,000 odd requests and
// 10,000 odd hand-made specs, unconfined and confined: resolve, run and start either work or throw
// an InvalidRequestError naming the field, never a TypeError from inside; nothing starts for a
// request or spec with a bad field.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { isInvalidRequestError } from '../../src/policy/errors.js'
import { isWellFormedPolicy } from '../../src/policy/schema/fast-check.js'
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import type { ShellExecSpec } from '../../src/shell/types.js'
import { scratchDir } from '../support/scratch.js'
import {
  oddNumber,
  oddString,
  oddValue,
  ownProtoKey,
  PROPERTY_RUNS,
  PROPERTY_TIMEOUT_MS,
  prototypeIsClean,
} from '../support/property/odd-values.js'
import { processStarts, spyOnProcessStarts, startsSince } from '../support/property/spawn-spy.js'

vi.mock(import('../../src/subprocess/native.js'), async (original) =>
  (await import('../support/property/spawn-spy.js')).spyingNative(await original()),
)

const root = scratchDir('cordon-executor-property')
let sandbox: LocalSandbox
let executors: { unconfined: LocalShellExecutor; confined: LocalShellExecutor }

beforeAll(async () => {
  spyOnProcessStarts()
  vi.stubEnv('CORDON_PRIVATE_DIR', scratchDir('cordon-executor-property-private'))
  sandbox = await LocalSandbox.create({ config: false })
  executors = {
    unconfined: new LocalShellExecutor({ cwd: root, graceMs: 500 }),
    confined: new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 }),
  }
})
afterAll(async () => {
  await executors?.unconfined.dispose()
  await executors?.confined.dispose()
  await sandbox?.dispose()
  vi.unstubAllEnvs()
})

/** A field's value: mostly one the executor takes (or absent), else anything at all. */
function field<T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: oddValue, weight: 1 })
}

/** A command that may run is `true` or `exit 3`; any other string holds a NUL byte (it cannot run). */
const command = fc.oneof(
  { arbitrary: fc.constantFrom('true', 'exit 3'), weight: 3 },
  { arbitrary: oddString.map((s) => `${s}\0`), weight: 1 },
  { arbitrary: oddValue.filter((v) => typeof v !== 'string'), weight: 1 },
)
const policy = fc.oneof(
  fc.constantFrom({ mode: 'read-only', workspaceRoot: root }, { mode: 'danger-full-access', workspaceRoot: root }),
  fc.record({ mode: oddValue, workspaceRoot: oddValue }, { requiredKeys: [] }),
  fc.constantFrom({ mode: 'read-only', workspaceRoot: root, extra: 10n }, { mode: 'read-only', workspaceRoot: 'rel' }),
)
const env = fc.oneof(
  fc.constant({ A: 'b' }),
  fc.dictionary(oddString, fc.oneof(oddString, fc.constant(undefined)), { maxKeys: 3 }),
  fc.constant(ownProtoKey('x')),
)

/** The fields a request and a spec share. */
const sharedFields = {
  command,
  signal: field(fc.constant(new AbortController().signal)),
  stdin: field(oddString),
  env: field(env),
  dshEnv: field(fc.constantFrom({ DSH_X: '1' }, {})),
  sandboxPolicy: field(policy),
  execution: field(fc.record({ sessionId: oddValue, callId: oddValue }, { requiredKeys: [] })),
}

const request = fc.oneof(
  {
    arbitrary: fc.record(
      {
        ...sharedFields,
        workdir: field(fc.constantFrom(root, '.', '/', 'missing')),
        timeoutMs: field(fc.oneof(fc.constantFrom(5000, 1e308), oddNumber)),
        stdoutMaxBytes: field(fc.oneof(fc.constantFrom(1, 4096), oddNumber)),
      },
      { requiredKeys: ['command'] },
    ),
    weight: 19,
  },
  { arbitrary: oddValue, weight: 1 },
)

const spec = fc.oneof(
  {
    arbitrary: fc.record(
      {
        ...sharedFields,
        workdir: field(fc.constantFrom(root, '/')),
        timeoutMs: field(fc.oneof(fc.constantFrom(5000), oddNumber)),
        stdoutMaxBytes: field(fc.oneof(fc.constantFrom(1, 4096), oddNumber)),
      },
      { requiredKeys: ['command', 'workdir', 'timeoutMs', 'stdoutMaxBytes', 'sandboxPolicy'] },
    ),
    weight: 19,
  },
  { arbitrary: oddValue, weight: 1 },
)

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const clean = (v: unknown) => typeof v === 'string' && !v.includes('\0')
const stringValues = (v: unknown) =>
  isPlainObject(v) && Object.values(v).every((x) => x === undefined || typeof x === 'string')

/**
 * The fields of `r` a shell run cannot take, by this test's own reading of src/shell/types.ts: a
 * spec also needs an absolute workdir and, in the foreground, a timer's timeout and a byte budget
 * (start ignores both); the policy counts where the executor confines (one that does not ignores it).
 */
function badFields(r: unknown, kind: 'request' | 'spec', confined: boolean, background: boolean): string[] {
  if (!isPlainObject(r)) return [kind]
  const bad: string[] = []
  const check = (name: string, ok: (v: unknown) => boolean, required = false) => {
    if (!(r[name] === undefined ? !required : ok(r[name]))) bad.push(name)
  }
  const foreground = kind === 'request' || !background
  check('command', clean, true)
  check('workdir', (v) => clean(v) && (kind === 'request' || (v as string).startsWith('/')), kind === 'spec')
  const timer = (v: unknown) => typeof v === 'number' && v > 0 && v <= (kind === 'request' ? Infinity : 2 ** 31 - 1)
  if (foreground) check('timeoutMs', (v) => timer(v) && Number.isFinite(v), kind === 'spec')
  if (foreground) check('stdoutMaxBytes', (v) => Number.isSafeInteger(v) && (v as number) > 0, kind === 'spec')
  check('signal', (v) => v instanceof AbortSignal)
  check('stdin', (v) => typeof v === 'string')
  check('env', stringValues)
  check('dshEnv', stringValues)
  if (confined) check('sandboxPolicy', isWellFormedPolicy)
  check('execution', stringValues)
  return bad
}

/** Runs `what` and checks its outcome against the bad fields: a typed error naming one, and nothing started. */
async function judged(bad: string[], what: () => Promise<unknown>): Promise<void> {
  const before = processStarts()
  let error: unknown
  try {
    await what()
  } catch (e) {
    error = e
  }
  const started = startsSince(before)
  expect(prototypeIsClean()).toBe(true)
  if (bad.length === 0) {
    // A valid request may still fail, but only with one of cordon's typed errors.
    if (error !== undefined) expect((error as { code?: unknown }).code, String(error)).toMatch(/^[A-Z_]+$/)
    return
  }
  expect(isInvalidRequestError(error), String(error)).toBe(true)
  const message = (error as Error).message
  expect(
    bad.some((name) => message.includes(name)),
    message,
  ).toBe(true)
  expect(started, message).toEqual([])
}

/** Runs `spec` in the foreground or the background (killed and waited for). */
async function runOrStart(executor: LocalShellExecutor, s: ShellExecSpec, background: boolean): Promise<void> {
  if (!background) {
    await executor.run(s)
    return
  }
  const job = executor.start(s)
  job.kill()
  await job.done
}

describe('the shell executor under odd requests', () => {
  it(
    'resolve then run or start: works, or names the bad field and starts nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(request, fc.boolean(), fc.boolean(), async (r, confined, background) => {
          const executor = confined ? executors.confined : executors.unconfined
          await judged(badFields(r, 'request', confined, background), async () => {
            const s = executor.resolve(r as never)
            await runOrStart(executor, s, background)
          })
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'a hand-made spec: run or start works, or names the bad field and starts nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(spec, fc.boolean(), fc.boolean(), async (s, confined, background) => {
          const executor = confined ? executors.confined : executors.unconfined
          await judged(badFields(s, 'spec', confined, background), () =>
            runOrStart(executor, s as ShellExecSpec, background),
          )
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it('the spy sees what a harmless run starts', async () => {
    const before = processStarts()
    const s = executors.confined.resolve({ command: 'true' })
    expect((await executors.confined.run(s)).exitCode).toBe(0)
    expect(startsSince(before).length).toBeGreaterThan(0)
  })
})
