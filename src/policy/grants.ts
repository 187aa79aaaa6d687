/**
 * What a policy grants, as concrete canonical paths: the one table (`profiles/grants.json`)
 * made specific to one policy. Every backend builds its plan from `grantsFor(policy)`:
 *
 * - Landlock: one rule per entry of `[grants.read, ...grants.writable, ...grants.devices]`,
 *   each `{ path, access }`; nothing else is allowed (allow-list).
 * - bubblewrap: `--ro-bind / /`, a fresh `/dev`, a private tmpfs over each existing
 *   `neverWritable` dir, then `--bind p p` for each `writable` path (temp dir included).
 *
 * Shape of the result (SandboxGrants):
 * `{ mode, confined, read: {path:'/', access}, writable: [{path, kind:'root'|'extra'|'temp'|'cache', access}],
 *    devices: [{path, access}], tempDir?, neverWritable, neverCreate, network, protectedPaths, hiddenPaths }`.
 * Paths are canonical (realpath'd where they exist) and deduplicated; `tempDir` is present
 * iff the temp dir is granted, and is what the executor exports as `TMPDIR`.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { z as Z } from 'zod'
import { networkOf } from './defaults.js'
import { InvalidRequestError, formatZodIssues } from './errors.js'
import { canonicalPath } from './resolve.js'
import { isWellFormedPolicy } from './schema/fast-check.js'
import type { NetworkPolicy, SandboxExecutionPolicy, SandboxMode } from './vocabulary.js'
import { vocabularySchemas } from './schema/vocabulary.js'
import { onDemand, zod } from './schema/zod-on-demand.js'
import { pathToFileURL } from 'node:url'
import { PACKAGE_ROOT } from './package-root.js'

/** The access rights a grant can carry (Landlock's vocabulary, coarsened where bwrap cannot tell apart). */
export const FS_ACCESS = [
  'read',
  'write',
  'execute',
  'truncate',
  'ioctl-dev',
  'make-dir',
  'make-reg',
  'make-sym',
  'make-fifo',
  'make-sock',
  'remove',
  'refer',
] as const

/** One access right: `read` covers files and directory listing; `remove` covers files and directories. */
export type FsAccess = (typeof FS_ACCESS)[number]

/** Kinds of device creation that are never granted. */
export type ForbiddenCreation = 'block-device' | 'char-device'

/** Why a path is writable: the workspace root, an extra writable root, the session's temp dir, or a package cache. */
export type WritableKind = 'root' | 'extra' | 'temp' | 'cache'

/** A path and the rights granted beneath it. */
export interface PathGrant {
  readonly path: string
  readonly access: readonly FsAccess[]
}

/** A writable path, with why it is writable. */
export interface WritableGrant extends PathGrant {
  readonly kind: WritableKind
}

/** Everything one policy grants, in concrete canonical paths. */
export interface SandboxGrants {
  readonly mode: SandboxMode
  /** False only for `danger-full-access`: no backend is asked, nothing below applies. */
  readonly confined: boolean
  /** Read (and execute) everywhere: always `{ path: '/', access: ['read', 'execute'] }`. */
  readonly read: PathGrant
  /** Writable paths, root first, then extra roots, then the temp dir; empty under `read-only`. */
  readonly writable: readonly WritableGrant[]
  /** The devices a command needs, with the access each needs. */
  readonly devices: readonly PathGrant[]
  /** The session's private temp dir (export as `TMPDIR`), present iff granted. */
  readonly tempDir?: string
  /** Host temp dirs that are never writable: a backend hides or leaves them read-only. */
  readonly neverWritable: readonly string[]
  /** Always `['block-device', 'char-device']`. */
  readonly neverCreate: readonly ForbiddenCreation[]
  readonly network: NetworkPolicy
  /** Read-only grants inside places that are otherwise hidden (the session's spill dir). */
  readonly readable: readonly PathGrant[]
  /** The policy's own protected paths, canonical (relative ones resolved against the workspace root). */
  readonly protectedPaths: readonly string[]
  readonly hiddenPaths: readonly string[]
}

/**
 * The grant table's schema (built on first use). The table is cordon's own data, read at every
 * start: the unit tests hold the checked-in file to this schema, the runtime trusts it.
 */
export const grantTableSchema = onDemand(() => {
  const { z } = zod()
  const accessList = z.array(z.enum(FS_ACCESS)).min(1)
  const modeRow = z.object({ confined: z.boolean(), writable: z.array(z.enum(['root', 'extra', 'temp', 'cache'])) })
  return z
    .object({
      $comment: z.string().optional(),
      version: z.literal(1),
      read: z.object({ path: z.literal('/'), access: accessList }),
      writableAccess: accessList,
      devices: z.array(z.object({ path: z.string().startsWith('/'), access: accessList })),
      neverWritable: z.array(z.string().startsWith('/')),
      neverCreate: z.array(z.enum(['block-device', 'char-device'])),
      modes: z.object({ 'read-only': modeRow, 'workspace-write': modeRow, 'danger-full-access': modeRow }),
    })
    .strict()
})

/** The parsed grant table. */
export type GrantTable = Z.infer<ReturnType<typeof grantTableSchema>>

/** Where the grant table lives (works from `src/policy/` and from `dist/policy/`). */
export const GRANT_TABLE_URL = pathToFileURL(path.join(PACKAGE_ROOT, 'profiles/grants.json'))

/** Reads the table; the one invariant a broken file must never slip past is checked here too. */
function loadGrantTable(): GrantTable {
  const table = JSON.parse(fs.readFileSync(GRANT_TABLE_URL, 'utf8')) as GrantTable
  if (
    table?.version !== 1 ||
    !Array.isArray(table.neverCreate) ||
    !table.neverCreate.includes('block-device') ||
    !table.neverCreate.includes('char-device')
  ) {
    throw new Error(`${GRANT_TABLE_URL.pathname}: not a version-1 grant table forbidding block and character devices`)
  }
  return table
}

/** The grant table, read once at module load. */
export const GRANT_TABLE: Readonly<GrantTable> = deepFreeze(loadGrantTable())

/** Options for grantsFor. */
export interface GrantsOptions {
  /** The session's private temp dir (absolute); granted and exported as `TMPDIR` in every confined mode. */
  tempDir?: string | undefined
  /** Paths granted read-only besides `/` (the session's spill dir, inside cordon's hidden private dir). */
  readable?: readonly string[] | undefined
  /** Package-manager cache dirs granted writable where the mode grants `cache` (the confined cache, or the host's). */
  caches?: readonly string[] | undefined
}

/**
 * What `policy` grants, as canonical, deduplicated paths. Throws InvalidRequestError (every
 * issue, each naming its field) for a malformed policy or a writable path that would make a
 * host temp dir (`/tmp`, `/var/tmp`, `/dev/shm`) writable.
 */
export function grantsFor(policy: SandboxExecutionPolicy, options: GrantsOptions = {}): SandboxGrants {
  const parsed = isWellFormedPolicy(policy)
    ? undefined
    : vocabularySchemas().SandboxExecutionPolicySchema.safeParse(policy)
  const issues = parsed === undefined || parsed.success ? [] : formatZodIssues(parsed.error)
  if (options.tempDir !== undefined && !path.isAbsolute(options.tempDir)) {
    issues.push(`tempDir: must be an absolute path, got ${JSON.stringify(options.tempDir)}`)
  }
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: 'invalid sandbox grants request' })

  const table = GRANT_TABLE
  const row = table.modes[policy.mode]
  const neverWritable = dedupe(table.neverWritable.map(canonicalPath))
  const candidates: Array<{ field: string; path: string; kind: WritableKind }> = []
  for (const kind of row.writable) {
    if (kind === 'root') candidates.push({ field: 'workspaceRoot', path: policy.workspaceRoot, kind })
    if (kind === 'extra') {
      for (const [i, p] of (policy.writableRoots ?? []).entries())
        candidates.push({ field: `writableRoots[${i}]`, path: p, kind })
    }
    if (kind === 'temp' && options.tempDir !== undefined)
      candidates.push({ field: 'tempDir', path: options.tempDir, kind })
    if (kind === 'cache') {
      for (const [i, p] of (options.caches ?? []).entries()) candidates.push({ field: `caches[${i}]`, path: p, kind })
    }
  }

  const writable: WritableGrant[] = []
  const seen = new Set<string>()
  for (const candidate of candidates) {
    const canonical = canonicalPath(candidate.path)
    const exposed = neverWritable.filter((hostTemp) => isSameOrInside(hostTemp, canonical))
    if (exposed.length > 0) {
      issues.push(
        `${candidate.field}: ${JSON.stringify(canonical)} would make the host temp dir ${exposed.map((e) => JSON.stringify(e)).join(', ')} writable, which a confined command may never write`,
      )
      continue
    }
    if (seen.has(canonical)) continue
    seen.add(canonical)
    writable.push({ path: canonical, kind: candidate.kind, access: table.writableAccess })
  }
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: 'invalid sandbox grants request' })

  const devices = dedupeBy(
    table.devices.map((d) => ({ path: canonicalPath(d.path), access: d.access })),
    (d) => d.path,
  )
  const tempGrant = writable.find((w) => w.kind === 'temp')
  const grants: SandboxGrants = {
    mode: policy.mode,
    confined: row.confined,
    read: table.read,
    writable,
    devices,
    ...(tempGrant === undefined ? {} : { tempDir: tempGrant.path }),
    neverWritable,
    neverCreate: table.neverCreate,
    network: networkOf(policy),
    readable: (options.readable ?? []).map((p) => ({ path: canonicalPath(p), access: table.read.access })),
    protectedPaths: dedupe(
      (policy.protectedPaths ?? []).map((p) =>
        canonicalPath(path.isAbsolute(p) ? p : path.join(policy.workspaceRoot, p)),
      ),
    ),
    hiddenPaths: dedupe((policy.hiddenPaths ?? []).map(canonicalPath)),
  }
  return deepFreeze(grants)
}

/** Whether `inner` is `outer` or lies beneath it (both canonical). */
function isSameOrInside(inner: string, outer: string): boolean {
  return inner === outer || outer === '/' || inner.startsWith(`${outer}/`)
}

function dedupe(paths: readonly string[]): string[] {
  return [...new Set(paths)]
}

function dedupeBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>()
  return items.filter((item) => {
    const k = key(item)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
