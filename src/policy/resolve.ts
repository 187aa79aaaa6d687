/**
 * Policy resolution: from what a caller knows (a cwd, maybe a configured root, a default,
 * a session override, an approved escalation) to one SandboxExecutionPolicy.
 *
 * Mode precedence: approved > session > default > `read-only`. Root precedence: explicit
 * `workspaceRoot` > `cwd`. Every path is made canonical the way the kernel resolves it
 * (realpath first, so `symlink/..` leaves the symlink's target, then lexical resolution).
 * The only I/O here is realpath/stat.
 */
import fs from 'node:fs'
import path from 'node:path'
import { InvalidRequestError, formatZodIssues } from './errors.js'
import { defaultsKept } from './profiles/hidden-defaults.js'
import { isWellFormedResolveInput } from './schema/fast-check.js'
import {
  DEFAULT_SANDBOX_MODE,
  isNormalRelativePath,
  SANDBOX_MODES,
  type NetworkPolicy,
  type ResourceLimits,
  type SandboxExecutionPolicy,
  type SandboxMode,
} from './vocabulary.js'
import { vocabularySchemas } from './schema/vocabulary.js'
import { onDemand, zod } from './schema/zod-on-demand.js'

/** What resolvePolicy needs; every field but `cwd` is optional. */
export interface ResolvePolicyInput {
  /** The caller's (or session's) working directory; the root when no `workspaceRoot` is given. Absolute. */
  cwd: string
  /** An explicit workspace root; wins over `cwd`. Absolute. */
  workspaceRoot?: string | undefined
  /** The deployment default; `read-only` when absent. */
  defaultMode?: SandboxMode | undefined
  /** The session's override; wins over the default. */
  sessionMode?: SandboxMode | undefined
  /** A mode the user approved for this one call; wins over everything. */
  approvedMode?: SandboxMode | undefined
  sessionId?: string | undefined
  /** Extra writable roots under `workspace-write`; must exist. */
  writableRoots?: readonly string[] | undefined
  network?: NetworkPolicy | undefined
  /** Paths that stay read-only (absolute, or relative to the workspace root); need not exist yet. */
  protectedPaths?: readonly string[] | undefined
  /** Keep the default protected paths (default true). */
  protectedDefaults?: boolean | undefined
  /** Default protected paths to leave writable (absolute, or relative to the workspace root). */
  unprotectedPaths?: readonly string[] | undefined
  /** Paths to hide; need not exist yet. */
  hiddenPaths?: readonly string[] | undefined
  /** The default hidden set: true (default), false, or all but the named entries. */
  hiddenDefaults?: boolean | { readonly except: readonly string[] } | undefined
  /** Host unix sockets a bubblewrap run keeps reachable. */
  allowUnixSockets?: readonly string[] | undefined
  /** Package-manager caches: cordon's confined cache (default) or the host's. */
  cacheRoots?: 'confined' | 'host' | undefined
  /** The command needs a writable /dev/shm (the chain prefers bubblewrap). */
  sharedMemory?: boolean | undefined
  requireEnforcement?: 'full' | undefined
  /** Resource limits of the run. */
  limits?: ResourceLimits | undefined
}

/** The zod schema of a ResolvePolicyInput (existence is checked by resolvePolicy itself), built on first use. */
export const resolvePolicyInputSchema = onDemand(() => {
  const { z } = zod()
  const modeField = z
    .string({ error: 'expected a sandbox mode string' })
    .refine((m) => (SANDBOX_MODES as readonly string[]).includes(m), {
      error: (issue) =>
        `unknown sandbox mode ${JSON.stringify(issue.input)} (expected one of ${SANDBOX_MODES.join(', ')})`,
    })
  const absoluteField = z
    .string({ error: 'expected a path string' })
    .refine((p) => p.length > 0, 'must not be empty')
    .refine((p) => !p.includes('\0'), 'must not contain a NUL byte')
    .refine((p) => p.length === 0 || path.isAbsolute(p), {
      error: (issue) => `must be an absolute path, got ${JSON.stringify(issue.input)}`,
    })
  const protectedField = z
    .string({ error: 'expected a path string' })
    .refine((p) => path.isAbsolute(p) || isNormalRelativePath(p), {
      error: (issue) =>
        `must be an absolute path, or a relative one inside the workspace root (no ".."), got ${JSON.stringify(issue.input)}`,
    })
  return z
    .object({
      cwd: absoluteField,
      workspaceRoot: absoluteField.optional(),
      defaultMode: modeField.optional(),
      sessionMode: modeField.optional(),
      approvedMode: modeField.optional(),
      sessionId: z.string().min(1, 'must not be empty').optional(),
      writableRoots: z.array(absoluteField).optional(),
      network: vocabularySchemas().NetworkPolicySchema.optional(),
      protectedPaths: z.array(protectedField).optional(),
      protectedDefaults: z.boolean().optional(),
      unprotectedPaths: z.array(protectedField).optional(),
      hiddenPaths: z.array(absoluteField).optional(),
      hiddenDefaults: z.union([z.boolean(), z.object({ except: z.array(z.string().min(1)) }).strict()]).optional(),
      allowUnixSockets: z.array(absoluteField).optional(),
      cacheRoots: z.enum(['confined', 'host']).optional(),
      sharedMemory: z.boolean().optional(),
      requireEnforcement: z.literal('full').optional(),
      limits: vocabularySchemas().ResourceLimitsSchema.optional(),
    })
    .strict()
})

/**
 * Canonical form of an absolute path, resolved the way the kernel would: the longest
 * existing prefix goes through realpath (so `link/..` is the link target's parent), the
 * missing rest is appended lexically. An existing path comes back fully realpath'd.
 */
export function canonicalPath(p: string): string {
  const absolute = path.isAbsolute(p) ? p : path.resolve(p)
  const parts = absolute.split('/').filter((part) => part !== '' && part !== '.')
  for (let keep = parts.length; keep >= 0; keep--) {
    const prefix = `/${parts.slice(0, keep).join('/')}`
    let real: string
    try {
      // A stat first: a missing prefix costs no exception (most hidden places do not exist).
      if (keep > 0 && fs.statSync(prefix, { throwIfNoEntry: false }) === undefined) continue
      real = fs.realpathSync.native(prefix)
    } catch {
      continue
    }
    return path.resolve(real, ...parts.slice(keep))
  }
  return path.resolve(absolute)
}

/** The protected-path fields of a policy: `protectedPaths`, `unprotectedPaths`, `protectedDefaults`. */
function protectionOf(
  given: ResolvePolicyInput,
): Pick<SandboxExecutionPolicy, 'protectedPaths' | 'unprotectedPaths' | 'protectedDefaults'> {
  return {
    ...(given.protectedPaths !== undefined ? { protectedPaths: rootRelative(given.protectedPaths) } : {}),
    ...(given.protectedDefaults !== undefined ? { protectedDefaults: given.protectedDefaults } : {}),
    ...(given.unprotectedPaths !== undefined ? { unprotectedPaths: rootRelative(given.unprotectedPaths) } : {}),
  }
}

/** The fields of how a run goes: caches, /dev/shm, host sockets, enforcement demanded, limits. */
function runFieldsOf(
  given: ResolvePolicyInput,
): Pick<SandboxExecutionPolicy, 'cacheRoots' | 'sharedMemory' | 'allowUnixSockets' | 'requireEnforcement' | 'limits'> {
  return {
    ...(given.cacheRoots !== undefined ? { cacheRoots: given.cacheRoots } : {}),
    ...(given.sharedMemory !== undefined ? { sharedMemory: given.sharedMemory } : {}),
    ...(given.allowUnixSockets !== undefined
      ? { allowUnixSockets: Object.freeze(dedupe(given.allowUnixSockets.map(canonicalPath))) }
      : {}),
    ...(given.requireEnforcement !== undefined ? { requireEnforcement: given.requireEnforcement } : {}),
    ...(given.limits !== undefined ? { limits: Object.freeze({ ...given.limits }) } : {}),
  }
}

/** Absolute paths canonical, relative ones (to the workspace root) as given; once each, frozen. */
function rootRelative(paths: readonly string[]): readonly string[] {
  return Object.freeze(dedupe(paths.map((p) => (path.isAbsolute(p) ? canonicalPath(p) : p))))
}

/** Whether `p` exists and is a directory (following symlinks). */
function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

function existingDirectory(field: string, p: string, issues: string[]): string | undefined {
  let real: string
  try {
    real = fs.realpathSync.native(p) // the kernel's own walk: `missing/..` does not exist
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const missing = code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP'
    issues.push(
      `${field}: ${missing ? 'directory does not exist' : `cannot be resolved (${code ?? 'error'})`}: ${JSON.stringify(p)}`,
    )
    return undefined
  }
  if (!isDirectory(real)) {
    issues.push(`${field}: not a directory: ${JSON.stringify(p)}`)
    return undefined
  }
  return path.resolve(real)
}

function dedupe(paths: readonly string[]): string[] {
  return [...new Set(paths)]
}

/**
 * Resolves one policy: the mode by precedence, the root canonical and existing, every
 * extension path canonical and deduplicated. Throws InvalidRequestError listing every
 * problem, each naming its field (a relative or missing root, an unknown mode…).
 */
export function resolvePolicy(input: ResolvePolicyInput): SandboxExecutionPolicy {
  if (!isWellFormedResolveInput(input)) {
    const parsed = resolvePolicyInputSchema().safeParse(input)
    if (!parsed.success) {
      throw new InvalidRequestError(formatZodIssues(parsed.error), {
        context: 'invalid sandbox policy',
        cause: parsed.error,
      })
    }
  }
  const given = input
  const issues: string[] = []

  const rootField = given.workspaceRoot !== undefined ? 'workspaceRoot' : 'cwd'
  const workspaceRoot = existingDirectory(rootField, given.workspaceRoot ?? given.cwd, issues)

  const writableRoots =
    given.writableRoots === undefined
      ? undefined
      : given.writableRoots.map((p, i) => existingDirectory(`writableRoots[${i}]`, p, issues))
  if (issues.length > 0 || workspaceRoot === undefined) {
    throw new InvalidRequestError(issues, { context: 'invalid sandbox policy' })
  }

  const mode = (given.approvedMode ?? given.sessionMode ?? given.defaultMode ?? DEFAULT_SANDBOX_MODE) as SandboxMode
  const policy: SandboxExecutionPolicy = { mode, workspaceRoot }
  if (given.sessionId !== undefined) policy.sessionId = given.sessionId
  if (writableRoots !== undefined) {
    policy.writableRoots = Object.freeze(dedupe((writableRoots as string[]).filter((p) => p !== workspaceRoot)))
  }
  if (given.network !== undefined) policy.network = given.network
  Object.assign(policy, protectionOf(given))
  if (given.hiddenPaths !== undefined) policy.hiddenPaths = Object.freeze(dedupe(given.hiddenPaths.map(canonicalPath)))
  if (given.hiddenDefaults !== undefined) {
    const d = given.hiddenDefaults
    defaultsKept({ hiddenDefaults: d }) // unknown entry names are refused here, with the known ones
    policy.hiddenDefaults = typeof d === 'boolean' ? d : Object.freeze({ except: Object.freeze([...d.except]) })
  }
  Object.assign(policy, runFieldsOf(given))
  return Object.freeze(policy)
}
