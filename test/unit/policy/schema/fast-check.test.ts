// The policy boundary's hand checks answer exactly as the zod schemas do on random input, valid
// and broken (fast-check): they may never accept what a schema refuses, and they must accept what
// it accepts (else the happy path would load zod after all).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isWellFormedPolicy, isWellFormedResolveInput } from '../../../../src/policy/schema/fast-check.js'
import { resolvePolicyInputSchema } from '../../../../src/policy/resolve.js'
import { vocabularySchemas } from '../../../../src/policy/schema/vocabulary.js'
import { anyValueOf } from '../../../support/arbitraries.js'

const anyValue = anyValueOf()
const pathLike = fc.oneof(
  fc.constantFrom(
    '/',
    '/w',
    '/w/sub',
    '/w/',
    '/w//x',
    '/w/./x',
    '/w/../x',
    'rel',
    'rel/x',
    './x',
    '../x',
    '',
    '/a\0b',
    '.',
  ),
  fc.string().map((s) => `/${s}`),
  fc.string(),
)
const paths = fc.oneof(
  fc.array(pathLike, { maxLength: 3 }),
  fc.constant(Object.assign(new Array<string>(2), { 1: '/x' })) /* a hole at 0 */,
  anyValue,
)
const modes = fc.oneof(fc.constantFrom('read-only', 'workspace-write', 'danger-full-access', 'write', ''), anyValue)
const flag = fc.oneof(fc.boolean(), anyValue)
const number = fc.oneof(
  fc.integer({ min: -2, max: 5 }),
  fc.double(),
  fc.constant(Number.MAX_SAFE_INTEGER + 1),
  anyValue,
)
const hiddenDefaults = fc.oneof(
  fc.boolean(),
  fc.record({ except: fc.oneof(fc.array(fc.constantFrom('ssh', '', 'aws'), { maxLength: 2 }), anyValue) }),
  fc.record({ except: fc.constant([]), extra: fc.constant(1) }),
  anyValue,
)

const policy = fc.record(
  {
    mode: modes,
    workspaceRoot: pathLike,
    sessionId: fc.oneof(fc.string(), anyValue),
    writableRoots: paths,
    network: fc.oneof(fc.constantFrom('inherit', 'deny', 'none'), anyValue),
    protectedPaths: paths,
    protectedDefaults: flag,
    unprotectedPaths: paths,
    hiddenPaths: paths,
    hiddenDefaults,
    cacheRoots: fc.oneof(fc.constantFrom('confined', 'host', 'shared'), anyValue),
    sharedMemory: flag,
    runAsOwner: flag,
    allowUnixSockets: paths,
    requireEnforcement: fc.oneof(fc.constantFrom('full', 'partial'), anyValue),
    limits: fc.oneof(
      fc.record(
        { processes: number, addressSpaceBytes: number, fileSizeBytes: number, other: number },
        { requiredKeys: [] },
      ),
      anyValue,
    ),
    unknown: anyValue,
  },
  { requiredKeys: [] },
)

const input = fc.record(
  {
    cwd: pathLike,
    workspaceRoot: pathLike,
    defaultMode: modes,
    sessionMode: modes,
    approvedMode: modes,
    sessionId: fc.oneof(fc.string(), anyValue),
    writableRoots: paths,
    network: fc.oneof(fc.constantFrom('inherit', 'deny'), anyValue),
    protectedPaths: paths,
    protectedDefaults: flag,
    unprotectedPaths: paths,
    hiddenPaths: paths,
    hiddenDefaults,
    allowUnixSockets: paths,
    cacheRoots: fc.oneof(fc.constantFrom('confined', 'host'), anyValue),
    sharedMemory: flag,
    requireEnforcement: fc.oneof(fc.constant('full'), anyValue),
    runAsOwner: flag,
    limits: fc.oneof(
      fc.record({ processes: number, fileSizeBytes: number, other: number }, { requiredKeys: [] }),
      anyValue,
    ),
  },
  { requiredKeys: [] },
)

const absolute = fc.constantFrom('/', '/w', '/w/sub', '/a b/c')
const absolutes = fc.array(absolute, { maxLength: 2 })
const validPolicy = fc.record(
  {
    mode: fc.constantFrom('read-only', 'workspace-write', 'danger-full-access'),
    workspaceRoot: absolute,
    sessionId: fc.constantFrom('s', 'session-1'),
    writableRoots: absolutes,
    network: fc.constantFrom('inherit', 'deny'),
    protectedPaths: fc.array(fc.constantFrom('/w/.git', '.git/hooks', 'a/b'), { maxLength: 2 }),
    protectedDefaults: fc.boolean(),
    unprotectedPaths: fc.array(fc.constantFrom('/w/.envrc', '.vscode', '../x'), { maxLength: 2 }),
    hiddenPaths: absolutes,
    hiddenDefaults: fc.oneof(
      fc.boolean(),
      fc.record({ except: fc.array(fc.constantFrom('ssh', 'aws'), { maxLength: 2 }) }),
    ),
    cacheRoots: fc.constantFrom('confined', 'host'),
    sharedMemory: fc.boolean(),
    runAsOwner: fc.boolean(),
    allowUnixSockets: absolutes,
    requireEnforcement: fc.constant('full'),
    limits: fc.record(
      {
        processes: fc.integer({ min: -1, max: 9 }),
        fileSizeBytes: fc.constantFrom(1 << 20, 0.5, Number.MAX_SAFE_INTEGER + 1),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['mode', 'workspaceRoot'] },
)
const validInput = fc.record(
  {
    cwd: absolute,
    workspaceRoot: fc.constantFrom('/w', '/w/../x', '/w/'),
    defaultMode: fc.constantFrom('read-only', 'workspace-write'),
    sessionMode: fc.constantFrom('read-only', 'danger-full-access'),
    approvedMode: fc.constant('workspace-write'),
    sessionId: fc.constant('s'),
    writableRoots: fc.array(fc.constantFrom('/x', '/x/'), { maxLength: 2 }),
    network: fc.constantFrom('inherit', 'deny'),
    protectedPaths: fc.array(fc.constantFrom('/w/.git/', '.git/hooks'), { maxLength: 2 }),
    protectedDefaults: fc.boolean(),
    unprotectedPaths: fc.array(fc.constantFrom('/w/.envrc', '.vscode'), { maxLength: 2 }),
    hiddenPaths: absolutes,
    hiddenDefaults: fc.boolean(),
    allowUnixSockets: absolutes,
    cacheRoots: fc.constantFrom('confined', 'host'),
    sharedMemory: fc.boolean(),
    requireEnforcement: fc.constant('full'),
    limits: fc.record(
      { processes: fc.integer({ min: -1, max: 9 }), addressSpaceBytes: fc.constant(1 << 30) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['cwd'] },
)
/** A valid record with one field set to something random (often invalid, sometimes unknown). */
const mutated = (valid: fc.Arbitrary<Record<string, unknown>>, fields: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(valid, fields)
    .chain(([v, f]) => fc.constantFrom(...Object.keys(f), 'unknown').map((k) => ({ ...v, [k]: k in f ? f[k] : 1 })))
const policies = fc.oneof(validPolicy, mutated(validPolicy, policy), policy)
const inputs = fc.oneof(validInput, mutated(validInput, input), input)

describe('isWellFormedPolicy', () => {
  const schema = vocabularySchemas().SandboxExecutionPolicySchema
  it('answers as SandboxExecutionPolicySchema does, on random policies', () => {
    let accepted = 0
    fc.assert(
      fc.property(policies, (p) => {
        const zodSays = schema.safeParse(p).success
        if (zodSays) accepted++
        expect(isWellFormedPolicy(p), JSON.stringify(p)).toBe(zodSays)
      }),
      { numRuns: 4000 },
    )
    // The property says something only if valid policies were among them.
    expect(accepted).toBeGreaterThan(50)
  })

  it('accepts the policies cordon builds every day, and refuses a non-plain object', () => {
    const p = {
      mode: 'workspace-write',
      workspaceRoot: '/w',
      writableRoots: ['/x'],
      hiddenDefaults: { except: ['ssh'] },
    }
    expect(isWellFormedPolicy(p)).toBe(true)
    expect(isWellFormedPolicy(Object.freeze({ ...p, protectedPaths: Object.freeze(['.git/hooks']) }))).toBe(true)
    expect(isWellFormedPolicy(new (class {})())).toBe(false)
    expect(isWellFormedPolicy([p])).toBe(false)
  })
})

describe('isWellFormedResolveInput', () => {
  const schema = resolvePolicyInputSchema()
  it('answers as the resolve input schema does, on random input', () => {
    let accepted = 0
    fc.assert(
      fc.property(inputs, (i) => {
        const zodSays = schema.safeParse(i).success
        if (zodSays) accepted++
        expect(isWellFormedResolveInput(i), JSON.stringify(i)).toBe(zodSays)
      }),
      { numRuns: 4000 },
    )
    expect(accepted).toBeGreaterThan(50)
  })
})
