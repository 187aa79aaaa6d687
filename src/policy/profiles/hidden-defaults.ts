/**
 * The hidden set of a policy: the default table (`profiles/hidden.json`, on unless the policy
 * turns it off or opts out of entries by name) plus the policy's own `hiddenPaths`, with `~` and
 * `$XDG_RUNTIME_DIR` expanded from the host's environment. Paths come back absolute and
 * lexically normal; the sandbox resolves symlinks and lists directories when it plans.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { InvalidRequestError } from '../errors.js'
import type { SandboxExecutionPolicy } from '../vocabulary.js'
import { onDemand, zod } from '../schema/zod-on-demand.js'
import { pathToFileURL } from 'node:url'
import { PACKAGE_ROOT } from '../package-root.js'

/** One hidden place: a path, or with `only`/`keep` a directory whose children are hidden by name. */
export interface HiddenPlace {
  /** The default entry's name, `policy` for the caller's own, `cordon-private` for cordon's dir. */
  readonly name: string
  /** Absolute, lexically normal (symlinks not yet resolved). */
  readonly path: string
  /** Hide only the children whose names match one of these globs (`*`, `?`). */
  readonly only?: readonly string[]
  /** Hide every child but those whose names match one of these globs. */
  readonly keep?: readonly string[]
}

/** One entry of the default table. */
export interface HiddenDefault {
  /** Lower-case words and dashes: what `hiddenDefaults.except` names. */
  readonly name: string
  /** Starts with `~`, `$XDG_RUNTIME_DIR` or `/`. */
  readonly path: string
  readonly only?: readonly string[] | undefined
  readonly keep?: readonly string[] | undefined
  readonly comment: string
}

/** The table's schema (built on first use): the unit tests hold the checked-in file to it, the runtime trusts it. */
export const hiddenTableSchema = onDemand(() => {
  const { z } = zod()
  const entry = z
    .object({
      name: z.string().regex(/^[a-z0-9-]+$/),
      path: z.string().regex(/^(~|\$XDG_RUNTIME_DIR|\/)/),
      only: z.array(z.string().min(1)).min(1).optional(),
      keep: z.array(z.string().min(1)).min(1).optional(),
      comment: z.string().min(1),
    })
    .strict()
    .refine((e) => e.only === undefined || e.keep === undefined, 'an entry has `only` or `keep`, not both')
  return z.object({ $comment: z.string(), version: z.literal(1), entries: z.array(entry) }).strict()
})

/** Where the table lives (works from `src/policy/` and from `dist/policy/`). */
export const HIDDEN_TABLE_URL = pathToFileURL(path.join(PACKAGE_ROOT, 'profiles/hidden.json'))

function loadTable(): readonly HiddenDefault[] {
  const table = JSON.parse(fs.readFileSync(HIDDEN_TABLE_URL, 'utf8')) as { version?: unknown; entries?: unknown }
  const entries = Array.isArray(table.entries) ? (table.entries as HiddenDefault[]) : undefined
  // What a broken file must never do at run time: hide nothing silently, or hide by a relative path.
  if (table.version !== 1 || entries === undefined || !entries.every((e) => /^(~|\$XDG_RUNTIME_DIR|\/)/.test(e?.path)))
    throw new Error(`${HIDDEN_TABLE_URL.pathname}: not a version-1 table of hidden paths`)
  const names = entries.map((e) => e.name)
  const twice = names.filter((n, i) => names.indexOf(n) !== i)
  if (twice.length > 0) throw new Error(`${HIDDEN_TABLE_URL.pathname}: entry names repeat: ${twice.join(', ')}`)
  return Object.freeze(entries.map((e) => Object.freeze(e)))
}

/** The default hidden table, read once at module load. */
export const HIDDEN_DEFAULTS: readonly HiddenDefault[] = loadTable()

/** The names of the default entries (what `hiddenDefaults.except` may name). */
export const HIDDEN_DEFAULT_NAMES: readonly string[] = HIDDEN_DEFAULTS.map((e) => e.name)

/** The environment the expansion reads. */
export interface HiddenEnvironment {
  HOME?: string | undefined
  XDG_RUNTIME_DIR?: string | undefined
}

/** `~…` / `$XDG_RUNTIME_DIR…` expanded, or undefined when the variable is unset or not absolute. */
function expand(p: string, env: HiddenEnvironment): string | undefined {
  const swap = (prefix: string, value: string | undefined) => {
    if (value === undefined || !path.isAbsolute(value)) return undefined
    return path.normalize(path.join(value, p.slice(prefix.length)))
  }
  if (p === '~' || p.startsWith('~/')) return swap('~', env.HOME ?? os.homedir())
  if (p.startsWith('$XDG_RUNTIME_DIR')) return swap('$XDG_RUNTIME_DIR', env.XDG_RUNTIME_DIR)
  return path.normalize(p)
}

/** The default entries a policy keeps (all, none, or all but the named ones); throws for unknown names. */
export function defaultsKept(policy: Pick<SandboxExecutionPolicy, 'hiddenDefaults'>): HiddenDefault[] {
  const choice = policy.hiddenDefaults ?? true
  if (choice === false) return []
  if (choice === true) return [...HIDDEN_DEFAULTS]
  const unknown = choice.except.filter((n) => !HIDDEN_DEFAULT_NAMES.includes(n))
  if (unknown.length > 0) {
    throw new InvalidRequestError(
      unknown.map(
        (n) => `hiddenDefaults.except: unknown entry ${JSON.stringify(n)} (known: ${HIDDEN_DEFAULT_NAMES.join(', ')})`,
      ),
      { context: 'invalid sandbox policy' },
    )
  }
  return HIDDEN_DEFAULTS.filter((e) => !choice.except.includes(e.name))
}

/**
 * The hidden places of `policy`: the kept defaults, then the policy's `hiddenPaths` (as given:
 * absolute). Entries whose variable is unset are left out. Throws InvalidRequestError for an
 * unknown entry name in `hiddenDefaults.except`.
 */
export function hiddenPlacesFor(
  policy: Pick<SandboxExecutionPolicy, 'hiddenDefaults' | 'hiddenPaths'>,
  env: HiddenEnvironment = process.env,
): HiddenPlace[] {
  const out: HiddenPlace[] = []
  for (const e of defaultsKept(policy)) {
    const p = expand(e.path, env)
    if (p === undefined || p === '/') continue
    out.push({ name: e.name, path: p, ...(e.only ? { only: e.only } : {}), ...(e.keep ? { keep: e.keep } : {}) })
  }
  for (const p of policy.hiddenPaths ?? []) out.push({ name: 'policy', path: p })
  return out
}

const compiled = new Map<string, RegExp>()

/** Whether `name` matches the glob (`*` any run, `?` one character; nothing else is special). */
export function globMatches(glob: string, name: string): boolean {
  let re = compiled.get(glob)
  if (re === undefined) {
    let source = '^'
    for (const ch of glob) source += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.+()[\]{}|]/g, '\\$&')
    re = new RegExp(`${source}$`, 's')
    compiled.set(glob, re)
  }
  return re.test(name)
}
