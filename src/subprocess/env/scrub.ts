/**
 * The child-process environment, built in one direction: the parent's env minus every ambient
 * `DSH_*` name (the harness owns that namespace), minus credentials and agent sockets (the rules in
 * `credentials.ts`, by name and by value; a value that cannot be a secret, `0` or `true`, is kept
 * whatever its name), and in `minimal` mode minus everything off a short allow-list; then the
 * caller's explicit entries (a string sets, `undefined` deletes), so a caller's explicit string
 * always survives. Pure functions: no I/O, no mutation of their inputs.
 */
import { InvalidRequestError } from '../../policy/errors.js'
import { type CredentialRule, cannotBeSecret, credentialNameMatch, credentialValueMatch } from './credentials.js'
import type { SubprocessEnvironmentMode } from '../types.js'

/** Prefix of the harness-managed environment namespace. */
export const DSH_ENV_PREFIX = 'DSH_'

/** The names `minimal` mode keeps from the parent (plus every `LC_*`); exact and case-sensitive. */
export const MINIMAL_ENV_NAMES: ReadonlySet<string> = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'TZ',
  'TERM',
  'TMPDIR',
])

/** A built environment: only string values, null prototype (so `__proto__` is an ordinary name). */
export type EnvRecord = Record<string, string>

/** Caller overrides: a string sets the name, `undefined` is a tombstone that deletes it. */
export type EnvOverrides = Readonly<Record<string, string | undefined>>

/** Why one parent entry does not reach the child: the harness namespace, a credential, or the allow-list. */
export type EnvDropRule = 'managed-namespace' | CredentialRule | 'not-in-minimal'

/** The rule that dropped one parent entry and a short label (never the value). */
export interface EnvDropReason {
  readonly rule: EnvDropRule
  readonly detail: string
}

const MANAGED: EnvDropReason = Object.freeze({ rule: 'managed-namespace', detail: 'ambient DSH_* (harness-owned)' })
const NOT_IN_MINIMAL: EnvDropReason = Object.freeze({ rule: 'not-in-minimal', detail: 'not on the minimal allow-list' })
const MANAGED_NAME = /^dsh_/i

/** True iff `name` lies in the managed `DSH_*` namespace, case-insensitively. */
export function isManagedEnvName(name: string): boolean {
  return MANAGED_NAME.test(name)
}

/** True iff `minimal` mode keeps `name` from the parent (the allow-list or `LC_*`). */
export function isMinimalEnvName(name: string): boolean {
  return MINIMAL_ENV_NAMES.has(name) || name.startsWith('LC_')
}

// Names and most values repeat across spawns (they are the host's), so each name's verdict is
// memoised with the last value found clean under it; a value that matched a shape is never kept.
// The bound only stops a caller that feeds ever-new names from growing the memo forever.
interface NameMemo {
  readonly byName: EnvDropReason | null
  clean: string | undefined
}
const memo = new Map<string, NameMemo>()
const MEMO_MAX = 4096

function memoFor(name: string): NameMemo {
  let entry = memo.get(name)
  if (entry === undefined) {
    const byName = isManagedEnvName(name) ? MANAGED : (credentialNameMatch(name) ?? null)
    entry = { byName, clean: undefined }
    if (memo.size >= MEMO_MAX) memo.clear()
    memo.set(name, entry)
  }
  return entry
}

/**
 * The rule that keeps the parent entry `name=value` out of the child, or undefined when it passes:
 * the `DSH_*` namespace first, then (in `minimal` mode) the allow-list, then credential names,
 * agent sockets and credential values, unless the value cannot be a secret (a switch such as
 * `COREPACK_INTEGRITY_KEYS=0`).
 */
export function envDropReason(
  name: string,
  value: string,
  mode: SubprocessEnvironmentMode = 'scrubbed',
): EnvDropReason | undefined {
  const entry = memoFor(name)
  if (entry.byName === MANAGED) return MANAGED
  if (mode === 'minimal' && !isMinimalEnvName(name)) return NOT_IN_MINIMAL
  if (cannotBeSecret(value)) return undefined
  if (entry.byName !== null) return entry.byName
  if (entry.clean === value) return undefined
  const byValue = credentialValueMatch(value)
  if (byValue === undefined) entry.clean = value
  return byValue
}

/**
 * Returns a copy of `parent` without `DSH_*` names, credentials and agent sockets, and in `minimal`
 * mode without anything off the allow-list. Undefined values are dropped.
 */
export function scrubbedParentEnv(
  parent: NodeJS.ProcessEnv = process.env,
  mode: SubprocessEnvironmentMode = 'scrubbed',
): EnvRecord {
  const out: EnvRecord = Object.create(null) as EnvRecord
  for (const name of Object.keys(parent)) {
    const value = parent[name]
    if (typeof value !== 'string') continue
    if (envDropReason(name, value, mode) === undefined) out[name] = value
  }
  return out
}

/**
 * Returns `base` with `overrides` applied, without validating names: a string value sets
 * (a deliberate opt-in, so credential-shaped or `DSH_*` entries survive), `undefined`
 * deletes. Throws TypeError for any other value type (e.g. a number or null from JS).
 */
export function mergeEnv(base: Readonly<Record<string, string | undefined>>, overrides?: EnvOverrides): EnvRecord {
  const out: EnvRecord = Object.create(null) as EnvRecord
  for (const name of Object.keys(base)) {
    const value = base[name]
    if (typeof value === 'string') out[name] = value
  }
  if (overrides === undefined) return out
  for (const name of Object.keys(overrides)) {
    const value: unknown = overrides[name]
    if (value === undefined) {
      delete out[name]
    } else if (typeof value === 'string') {
      out[name] = value
    } else {
      throw new InvalidRequestError([
        `env.${name}: must be a string or undefined, got ${value === null ? 'null' : typeof value}`,
      ])
    }
  }
  return out
}

/**
 * Returns the `NAME=value` strings execve expects, in insertion order. Entries that
 * cannot be represented are skipped, not thrown: undefined values, empty names, names
 * containing `=` (the kernel would split them at the first `=`), and names or values
 * containing NUL (C strings would silently truncate them).
 */
export function envToArray(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = []
  for (const name of Object.keys(env)) {
    const value = env[name]
    if (typeof value !== 'string') continue
    if (name.length === 0 || name.includes('=') || name.includes('\0') || value.includes('\0')) continue
    out.push(`${name}=${value}`)
  }
  return out
}
