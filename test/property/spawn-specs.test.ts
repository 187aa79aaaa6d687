// The subprocess runtime (src/subprocess/runtime.ts:LocalSubprocessRuntime) under 10,000 odd spawn
// specs (native and portable paths) and 10,000 odd terminal specs: a spec the boundary schema
// refuses throws an InvalidRequestError naming the field and starts nothing; one it takes starts
// (or fails with a typed error), and never crashes the host.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { isInvalidRequestError } from '../../src/policy/errors.js'
import { LocalSubprocessRuntime } from '../../src/subprocess/runtime.js'
import { spawnSpecSchema } from '../../src/subprocess/spec/schema.js'
import { terminalSpecSchema } from '../../src/subprocess/spec/terminal-schema.js'
import type { SubprocessSpawnSpec, SubprocessTerminalSpawnSpec } from '../../src/subprocess/types.js'
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

const root = scratchDir('cordon-spawn-property')
let runtimes: { native: LocalSubprocessRuntime; portable: LocalSubprocessRuntime }

beforeAll(() => {
  spyOnProcessStarts()
  runtimes = {
    native: new LocalSubprocessRuntime({ spillDir: root }),
    portable: new LocalSubprocessRuntime({ spillDir: root, spawnPath: 'portable' }),
  }
})
afterAll(async () => {
  await runtimes?.native.dispose()
  await runtimes?.portable.dispose()
})

/** A field's value: mostly one the schema takes, else anything at all. */
function field<T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: oddValue, weight: 1 })
}

/** A program that may start is `true`; every other word holds a NUL byte or is no string. */
const argv = fc.oneof(
  { arbitrary: fc.constantFrom(['true'], ['/bin/true', 'a b']), weight: 3 },
  {
    arbitrary: fc.array(
      oddString.map((s) => `${s}\0`),
      { minLength: 1, maxLength: 2 },
    ),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(
      [],
      [''],
      [1],
      [undefined],
      ['true', 2],
      Object.assign(new Array<string>(2), { 1: 'x' }),
    ),
    weight: 1,
  },
)
const cwd = field(fc.constantFrom(root, '/'))
const env = field(
  fc.oneof(
    fc.constant({ A: 'b', REMOVED: undefined }),
    fc.dictionary(oddString, oddString, { maxKeys: 3 }),
    fc.constant(ownProtoKey('x')),
  ),
)
const graceMs = field(fc.oneof(fc.constantFrom(500), oddNumber))
const output = fc.oneof(
  fc.constantFrom('inherit', { maxBytes: 1024 }, { maxBytes: 0, spill: { maxBytes: 10 } }),
  fc.record({ maxBytes: oddValue, spill: oddValue }, { requiredKeys: [] }),
  oddValue,
)
/** Confinement objects, mostly broken: a real plan comes from the sandbox floor, not from here. */
const confinement = fc.oneof(
  fc.record({ backend: oddValue, mode: oddValue }, { requiredKeys: [] }),
  fc.constantFrom(
    { backend: 'landlock', mode: 'read-only', bounds: { pids: 0 } },
    { backend: 'bubblewrap', mode: 'read-only', mustStay: [{ path: 'rel', target: '' }] },
    { backend: 'seatbelt', mode: 'danger-full-access' },
    { backend: 'landlock', mode: 'read-only', network: { proxyPort: 70000, serve: () => undefined } },
  ),
  oddValue,
)

/** Any key a spec might carry besides its own, a prototype key included. */
const extra = fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'extra', 'toString'), oddValue, { maxKeys: 1 })

const spawnSpec = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc.record(
          {
            argv,
            cwd,
            stdio: field(
              fc.record({ stdin: fc.constantFrom('ignore', { data: 'x' }), stdout: output, stderr: output }),
            ),
            graceMs,
            env,
            environment: field(fc.constantFrom('scrubbed', 'minimal')),
            confinement: fc.oneof(
              { arbitrary: fc.constant(undefined), weight: 4 },
              { arbitrary: confinement, weight: 1 },
            ),
            supervise: field(fc.boolean()),
            signal: field(fc.constant(new AbortController().signal)),
          },
          { requiredKeys: ['argv', 'cwd', 'stdio', 'graceMs'] },
        ),
        extra,
      )
      .map(([spec, more]) => ({ ...more, ...spec })),
    weight: 19,
  },
  { arbitrary: oddValue, weight: 1 },
)

const dimension = field(fc.oneof(fc.constantFrom(80, 24, 1, 65_535), oddNumber))
const terminalSpec = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc.record(
          {
            argv,
            cwd,
            env,
            cols: dimension,
            rows: dimension,
            graceMs,
            signal: field(fc.constant(new AbortController().signal)),
            launcher: field(fc.boolean()),
            ruleset: fc.oneof(fc.constant(undefined), oddValue),
            network: fc.oneof(fc.constant(undefined), oddValue),
          },
          { requiredKeys: ['argv', 'cwd', 'cols', 'rows', 'graceMs'] },
        ),
        extra,
      )
      .map(([spec, more]) => ({ ...more, ...spec })),
    weight: 19,
  },
  { arbitrary: oddValue, weight: 1 },
)

/** The top-level fields a zod schema refuses in `spec` (`(root)` for a spec that is no object). */
function refusedFields(
  schema: { safeParse(v: unknown): { error?: { issues: { path: PropertyKey[] }[] } } },
  spec: unknown,
): string[] {
  return (schema.safeParse(spec).error?.issues ?? []).map((i) => (i.path.length === 0 ? '(root)' : String(i.path[0])))
}

/** Checks a refused spec's outcome: an InvalidRequestError naming each refused field, and nothing started. */
function expectRefused(error: unknown, refused: readonly string[], started: readonly string[]): void {
  expect(isInvalidRequestError(error), String(error)).toBe(true)
  const issues = (error as { issues: readonly string[] }).issues
  for (const name of refused)
    expect(
      issues.some((i) => i.startsWith(name)),
      `${name} in ${issues.join('; ')}`,
    ).toBe(true)
  expect(started, issues.join('; ')).toEqual([])
}

/** Whether `error` is one of cordon's typed errors (a code of capitals), not a TypeError from inside. */
function expectTyped(error: unknown): void {
  expect((error as { code?: unknown }).code, String(error)).toMatch(/^[A-Z_]+$/)
}

/**
 * Starts `spec` through `start`: a spec `schema` refuses fails with those fields named and nothing
 * started; any other failure is a typed error; the prototypes stay clean either way.
 */
async function expectStart(schema: Parameters<typeof refusedFields>[0], spec: unknown, start: () => Promise<void>) {
  const refused = refusedFields(schema, spec)
  const before = processStarts()
  let error: unknown
  try {
    await start()
  } catch (e) {
    error = e
  }
  const started = startsSince(before)
  expect(prototypeIsClean()).toBe(true)
  if (refused.length > 0) expectRefused(error, refused, started)
  else if (error !== undefined) expectTyped(error)
}

describe('the subprocess runtime under odd specs', () => {
  it(
    'spawn: refuses a spec the schema refuses, by field, before anything starts',
    async () => {
      await fc.assert(
        fc.asyncProperty(spawnSpec, fc.boolean(), async (spec, portable) => {
          const runtime = portable ? runtimes.portable : runtimes.native
          await expectStart(spawnSpecSchema(), spec, async () => {
            const handle = runtime.spawn(spec as SubprocessSpawnSpec)
            await handle.done.catch((e: unknown) => expectTyped(e))
            await handle.waitForExit()
          })
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'spawnTerminal: refuses a spec the schema refuses, by field, before any terminal starts',
    async () => {
      await fc.assert(
        fc.asyncProperty(terminalSpec, async (spec) => {
          await expectStart(terminalSpecSchema(), spec, async () => {
            const terminal = await runtimes.native.spawnTerminal(spec as SubprocessTerminalSpawnSpec)
            await terminal.done
            await terminal.terminate()
          })
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it('the spy sees what a spawn and a terminal start', async () => {
    const before = processStarts()
    const spec: SubprocessSpawnSpec = {
      argv: ['true'],
      cwd: root,
      stdio: { stdin: 'ignore', stdout: 'inherit', stderr: 'inherit' },
      graceMs: 500,
    }
    for (const runtime of [runtimes.native, runtimes.portable]) await runtime.spawn(spec).done
    const terminal = await runtimes.native.spawnTerminal({
      argv: ['true'],
      cwd: root,
      cols: 80,
      rows: 24,
      graceMs: 500,
    })
    await terminal.done
    const started = startsSince(before)
    expect(started.filter((s) => s.startsWith('native.spawn'))).toHaveLength(1)
    expect(started.filter((s) => s.startsWith('child_process.spawn'))).toHaveLength(1)
    expect(started.filter((s) => s.startsWith('node-pty.spawn'))).toHaveLength(1)
  })
})
