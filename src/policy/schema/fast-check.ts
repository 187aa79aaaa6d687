/**
 * The happy path of the policy boundary: hand-written checks that answer "valid" only for input
 * the zod schemas (vocabulary.ts, resolve.ts) accept, and "not sure" for anything else, so
 * zod loads and runs only then (and names every problem). A property test holds each check to
 * its schema's answer.
 */
import path from 'node:path'
import {
  isNormalAbsolutePath,
  isNormalRelativePath,
  NETWORK_POLICIES,
  SANDBOX_MODES,
  type SandboxExecutionPolicy,
} from '../vocabulary.js'

type Plain = Record<string, unknown>

/** A plain object (own prototype Object or null): what the checks read without surprises. */
const isPlain = (v: unknown): v is Plain => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}
const onlyKeys = (o: Plain, allowed: ReadonlySet<string>) => Object.keys(o).every((k) => allowed.has(k))
const optional = (v: unknown, check: (v: unknown) => boolean) => v === undefined || check(v)
const isBoolean = (v: unknown) => typeof v === 'boolean'
const oneOf = (set: readonly string[]) => (v: unknown) => typeof v === 'string' && set.includes(v)
/** Every element (holes included: zod reads them as undefined) passes. */
const arrayOf = (check: (v: unknown) => boolean) => (v: unknown) => {
  if (!Array.isArray(v)) return false
  for (let i = 0; i < v.length; i++) if (!check(v[i])) return false
  return true
}
const nonEmptyString = (v: unknown) => typeof v === 'string' && v.length > 0
const normalAbsolute = (v: unknown) => typeof v === 'string' && v.startsWith('/') && isNormalAbsolutePath(v)
const limit = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0

const POLICY_KEYS: ReadonlySet<string> = new Set([
  'mode',
  'workspaceRoot',
  'sessionId',
  'writableRoots',
  'network',
  'protectedPaths',
  'protectedDefaults',
  'unprotectedPaths',
  'hiddenPaths',
  'hiddenDefaults',
  'cacheRoots',
  'sharedMemory',
  'runAsOwner',
  'allowUnixSockets',
  'requireEnforcement',
  'limits',
])
const LIMIT_KEYS: ReadonlySet<string> = new Set([
  'processes',
  'addressSpaceBytes',
  'fileSizeBytes',
  'memoryBytes',
  'tempBytes',
  'cpuSeconds',
])
const EXCEPT_KEYS: ReadonlySet<string> = new Set(['except'])

const hiddenDefaults = (v: unknown) =>
  typeof v === 'boolean' || (isPlain(v) && onlyKeys(v, EXCEPT_KEYS) && arrayOf(nonEmptyString)(v.except))
const cacheRoots = oneOf(['confined', 'host'])
const network = oneOf(NETWORK_POLICIES)

/** A ResourceLimits object the schema accepts. */
const limitsObject = (l: unknown) =>
  isPlain(l) && onlyKeys(l, LIMIT_KEYS) && Object.values(l).every((n) => optional(n, limit))

/** True only when SandboxExecutionPolicySchema accepts `v` (false: ask the schema). */
export function isWellFormedPolicy(v: unknown): v is SandboxExecutionPolicy {
  if (!isPlain(v) || !onlyKeys(v, POLICY_KEYS)) return false
  return (
    oneOf(SANDBOX_MODES)(v.mode) &&
    normalAbsolute(v.workspaceRoot) &&
    optional(v.sessionId, nonEmptyString) &&
    optional(v.writableRoots, arrayOf(normalAbsolute)) &&
    optional(v.network, network) &&
    optional(
      v.protectedPaths,
      arrayOf((p) => typeof p === 'string' && (isNormalAbsolutePath(p) || isNormalRelativePath(p))),
    ) &&
    optional(v.protectedDefaults, isBoolean) &&
    optional(
      v.unprotectedPaths,
      arrayOf((p) => typeof p === 'string' && (isNormalAbsolutePath(p) || isNormalRelativePath(p))),
    ) &&
    optional(v.hiddenPaths, arrayOf(normalAbsolute)) &&
    optional(v.hiddenDefaults, hiddenDefaults) &&
    optional(v.cacheRoots, cacheRoots) &&
    optional(v.sharedMemory, isBoolean) &&
    optional(v.runAsOwner, isBoolean) &&
    optional(v.allowUnixSockets, arrayOf(normalAbsolute)) &&
    optional(v.requireEnforcement, (r) => r === 'full') &&
    optional(v.limits, limitsObject)
  )
}

const INPUT_KEYS: ReadonlySet<string> = new Set([
  'cwd',
  'workspaceRoot',
  'defaultMode',
  'sessionMode',
  'approvedMode',
  'sessionId',
  'writableRoots',
  'network',
  'protectedPaths',
  'protectedDefaults',
  'unprotectedPaths',
  'hiddenPaths',
  'hiddenDefaults',
  'allowUnixSockets',
  'cacheRoots',
  'sharedMemory',
  'requireEnforcement',
  'limits',
])

const absoluteField = (v: unknown) => typeof v === 'string' && !v.includes('\0') && path.isAbsolute(v)
const mode = oneOf(SANDBOX_MODES)

/** True only when ResolvePolicyInputSchema accepts `v` (false: ask the schema). */
export function isWellFormedResolveInput(v: unknown): boolean {
  if (!isPlain(v) || !onlyKeys(v, INPUT_KEYS)) return false
  return (
    absoluteField(v.cwd) &&
    optional(v.workspaceRoot, absoluteField) &&
    optional(v.defaultMode, mode) &&
    optional(v.sessionMode, mode) &&
    optional(v.approvedMode, mode) &&
    optional(v.sessionId, nonEmptyString) &&
    optional(v.writableRoots, arrayOf(absoluteField)) &&
    optional(v.network, network) &&
    optional(
      v.protectedPaths,
      arrayOf((p) => typeof p === 'string' && (path.isAbsolute(p) || isNormalRelativePath(p))),
    ) &&
    optional(v.protectedDefaults, isBoolean) &&
    optional(
      v.unprotectedPaths,
      arrayOf((p) => typeof p === 'string' && (path.isAbsolute(p) || isNormalRelativePath(p))),
    ) &&
    optional(v.hiddenPaths, arrayOf(absoluteField)) &&
    optional(v.hiddenDefaults, hiddenDefaults) &&
    optional(v.allowUnixSockets, arrayOf(absoluteField)) &&
    optional(v.cacheRoots, cacheRoots) &&
    optional(v.sharedMemory, isBoolean) &&
    optional(v.requireEnforcement, (r) => r === 'full') &&
    optional(v.limits, limitsObject)
  )
}
