/**
 * The default protected files beyond git's own places (`profiles/protected.json`): what editors,
 * agents, shells and git run or load without asking (VS Code tasks, `.mcp.json`,
 * `.envrc`, `~/.bashrc`, `~/.gitconfig`, …). A `~/` entry is the host's `$HOME`; any other is
 * relative to each writable root. The policy opts out of single paths with `unprotectedPaths`,
 * or of every default with `protectedDefaults: false`. Paths come back absolute and lexically
 * normal; the sandbox resolves symlinks and keeps only those inside writable roots.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PACKAGE_ROOT } from '../package-root.js'
import { onDemand, zod } from '../schema/zod-on-demand.js'
import { isNormalRelativePath, type SandboxExecutionPolicy } from '../vocabulary.js'

/** One entry of the default table. */
export interface ProtectedDefault {
  /** Lower-case words and dashes. */
  readonly name: string
  /** `~/…` (the host's home) or a normal relative path (in each writable root). */
  readonly path: string
  readonly comment: string
}

const isEntryPath = (p: string) => (p.startsWith('~/') && isNormalRelativePath(p.slice(2))) || isNormalRelativePath(p)

/** The table's schema (built on first use): the unit tests hold the checked-in file to it, the runtime trusts it. */
export const protectedTableSchema = onDemand(() => {
  const { z } = zod()
  const entry = z
    .object({
      name: z.string().regex(/^[a-z0-9-]+$/),
      path: z.string().refine(isEntryPath, 'must be `~/` and a relative path, or a relative path without ".."'),
      comment: z.string().min(1),
    })
    .strict()
  return z.object({ $comment: z.string(), version: z.literal(1), entries: z.array(entry) }).strict()
})

/** Where the table lives (works from `src/policy/` and from `dist/policy/`). */
export const PROTECTED_TABLE_URL = pathToFileURL(path.join(PACKAGE_ROOT, 'profiles/protected.json'))

function loadTable(): readonly ProtectedDefault[] {
  const table = JSON.parse(fs.readFileSync(PROTECTED_TABLE_URL, 'utf8')) as { version?: unknown; entries?: unknown }
  const entries = Array.isArray(table.entries) ? (table.entries as ProtectedDefault[]) : undefined
  // What a broken file must never do at run time: protect nothing silently, or name a path outside.
  if (table.version !== 1 || entries === undefined || !entries.every((e) => isEntryPath(String(e?.path))))
    throw new Error(`${PROTECTED_TABLE_URL.pathname}: not a version-1 table of protected paths`)
  return Object.freeze(entries.map((e) => Object.freeze(e)))
}

/** The default protected table, read once at module load. */
export const PROTECTED_DEFAULTS: readonly ProtectedDefault[] = loadTable()

/** One default protected path made absolute. */
export interface ProtectedDefaultPlace {
  readonly name: string
  readonly path: string
}

/**
 * The default table's paths for writable `roots` (each relative entry in every root; `~/`
 * entries under `home`, left out when it is undefined or not absolute), less those `unprotected` covers.
 * Empty when the policy turns the defaults off.
 */
export function protectedDefaultPlaces(
  policy: Pick<SandboxExecutionPolicy, 'protectedDefaults'>,
  roots: readonly string[],
  unprotected: readonly string[],
  home: string | undefined,
): ProtectedDefaultPlace[] {
  if (policy.protectedDefaults === false) return []
  const out: ProtectedDefaultPlace[] = []
  for (const e of PROTECTED_DEFAULTS) {
    const bases = e.path.startsWith('~/') ? (home !== undefined && path.isAbsolute(home) ? [home] : []) : roots
    const rel = e.path.startsWith('~/') ? e.path.slice(2) : e.path
    for (const base of bases) {
      const p = path.join(base, rel)
      if (!isUnprotected(p, unprotected)) out.push({ name: e.name, path: p })
    }
  }
  return out
}

/** Whether `p` is one of `unprotected` or lies beneath one (both absolute). */
export function isUnprotected(p: string, unprotected: readonly string[]): boolean {
  return unprotected.some((u) => p === u || u === '/' || p.startsWith(`${u}/`))
}

/** The policy's `unprotectedPaths` made absolute (a relative one is against the workspace root). */
export function unprotectedOf(policy: Pick<SandboxExecutionPolicy, 'unprotectedPaths' | 'workspaceRoot'>): string[] {
  return (policy.unprotectedPaths ?? []).map((p) => (path.isAbsolute(p) ? p : path.join(policy.workspaceRoot, p)))
}
