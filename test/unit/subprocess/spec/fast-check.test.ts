// The spawn boundary's fast check never accepts what the zod schema refuses (it may only be
// unsure): random specs, valid and broken, from fast-check.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { certainlyValidSpec, certainlyValidTerminalSpec } from '../../../../src/subprocess/spec/fast-check.js'
import { terminalSpecSchema } from '../../../../src/subprocess/spec/terminal-schema.js'
import { spawnSpecSchema } from '../../../../src/subprocess/spec/schema.js'
import { anyValueOf } from '../../../support/arbitraries.js'

const anyValue = anyValueOf('pipe', 'inherit', 'ignore')
const output = fc.oneof(
  fc.constant('pipe'),
  fc.constant('inherit'),
  fc.record({ maxBytes: fc.oneof(fc.nat(), fc.integer(), fc.double()) }),
  fc.record({ maxBytes: fc.nat(), spill: fc.oneof(fc.record({ maxBytes: fc.nat() }), anyValue) }),
  anyValue,
)
const spec = fc.record(
  {
    argv: fc.oneof(fc.array(fc.string(), { maxLength: 3 }), anyValue),
    cwd: fc.oneof(fc.constant('/tmp'), fc.string(), anyValue),
    stdio: fc.oneof(
      fc.record({
        stdin: fc.oneof(fc.constant('ignore'), fc.constant('pipe'), fc.record({ data: fc.string() }), anyValue),
        stdout: output,
        stderr: output,
      }),
      anyValue,
    ),
    graceMs: fc.oneof(fc.double(), fc.integer({ min: -5, max: 5000 }), anyValue),
    env: fc.oneof(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.constant(undefined), fc.integer())), anyValue),
    environment: fc.oneof(fc.constant('scrubbed'), fc.constant('minimal'), anyValue),
    supervise: anyValue,
    confinement: fc.oneof(
      fc.record({
        backend: fc.oneof(fc.constant('landlock'), fc.constant('bubblewrap'), anyValue),
        mode: fc.oneof(fc.constant('read-only'), fc.constant('workspace-write'), anyValue),
        namespaces: fc.oneof(fc.record({ ipc: anyValue, net: fc.boolean() }), anyValue),
      }),
      anyValue,
    ),
    extra: anyValue,
  },
  { requiredKeys: [] },
)

describe('certainlyValidSpec', () => {
  it('never accepts a spec the schema refuses', () => {
    fc.assert(
      fc.property(spec, (s) => {
        if (certainlyValidSpec(s)) expect(spawnSpecSchema().safeParse(s).success, JSON.stringify(s)).toBe(true)
      }),
      { numRuns: 3000 },
    )
  })

  it('accepts the specs the runtime sees every day', () => {
    const base = {
      argv: ['/bin/true'],
      cwd: '/',
      graceMs: 1000,
      stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    }
    expect(certainlyValidSpec(base)).toBe(true)
    expect(
      certainlyValidSpec({
        ...base,
        env: { A: '1', B: undefined },
        signal: new AbortController().signal,
        supervise: true,
        stdio: { stdin: { data: 'x' }, stdout: { maxBytes: 10, spill: { maxBytes: 100 } }, stderr: 'inherit' },
        confinement: { backend: 'landlock', mode: 'read-only', steps: { dropCaps: true }, namespaces: { ipc: true } },
      }),
    ).toBe(true)
    expect(certainlyValidSpec({ ...base, argv: ['a\0b'] })).toBe(false)
    expect(certainlyValidSpec({ ...base, bogus: 1 })).toBe(false)
  })

  it('reads a hole in a list as the undefined entry it is, as the schema does (every() skips it)', () => {
    const holed = (...tail: string[]) =>
      Object.assign(new Array<string>(1 + tail.length), Object.fromEntries(tail.map((t, i) => [i + 1, t])))
    const base = {
      argv: ['/bin/true'],
      cwd: '/',
      graceMs: 1000,
      stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    }
    const confined = { backend: 'landlock', mode: 'read-only' }
    for (const s of [
      { ...base, argv: holed('x') },
      { ...base, confinement: { ...confined, mustNotAppear: holed('/a') } },
      { ...base, confinement: { ...confined, namespaces: { view: holed('/a') } } },
    ]) {
      expect(spawnSpecSchema().safeParse(s).success).toBe(false)
      expect(certainlyValidSpec(s)).toBe(false)
    }
    expect(certainlyValidTerminalSpec({ argv: holed('x'), cwd: '/', cols: 80, rows: 24, graceMs: 1000 })).toBe(false)
  })

  it('takes env only as a plain object, as the schema does (a Date has no keys, yet is no record)', () => {
    const base = {
      argv: ['/bin/true'],
      cwd: '/',
      graceMs: 1000,
      stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    }
    for (const env of [new Date(0), new Map(), /x/]) {
      expect(spawnSpecSchema().safeParse({ ...base, env }).success).toBe(false)
      expect(certainlyValidSpec({ ...base, env })).toBe(false)
    }
    expect(certainlyValidSpec({ ...base, env: Object.assign(Object.create(null), { A: 'b' }) })).toBe(true)
  })
})

const terminalSpec = fc.record(
  {
    argv: fc.oneof(fc.array(fc.string(), { maxLength: 3 }), fc.constant(['bash', '-i']), anyValue),
    cwd: fc.oneof(fc.constant('/tmp'), fc.string(), anyValue),
    cols: fc.oneof(fc.integer({ min: -1, max: 70_000 }), fc.double(), fc.constant(80), anyValue),
    rows: fc.oneof(fc.integer({ min: -1, max: 70_000 }), fc.constant(24), anyValue),
    graceMs: fc.oneof(fc.double(), fc.integer({ min: -5, max: 5000 }), fc.constant(1000), anyValue),
    env: fc.oneof(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.constant(undefined), fc.integer())), anyValue),
    launcher: anyValue,
    ruleset: fc.oneof(
      fc.constant({ closed: false, fresh: () => 3 }),
      fc.record({
        closed: anyValue,
        fresh: fc.oneof(
          fc.constant(() => 3),
          anyValue,
        ),
      }),
      anyValue,
    ),
    extra: anyValue,
  },
  { requiredKeys: [] },
)

describe('certainlyValidTerminalSpec', () => {
  it('never accepts a terminal spec the schema refuses, and accepts the usual ones', () => {
    fc.assert(
      fc.property(terminalSpec, (s) => {
        if (certainlyValidTerminalSpec(s))
          expect(terminalSpecSchema().safeParse(s).success, JSON.stringify(s)).toBe(true)
      }),
      { numRuns: 3000 },
    )
    const usual = { argv: ['bash', '-i'], cwd: '/tmp', cols: 80, rows: 24, graceMs: 1000, env: { A: 'b' } }
    expect(certainlyValidTerminalSpec(usual)).toBe(true)
    expect(certainlyValidTerminalSpec({ ...usual, launcher: true, ruleset: { closed: false, fresh: () => 3 } })).toBe(
      true,
    )
  })
})
