/**
 * The child-process environment, built in one direction: the parent's env minus
 * credential-shaped names and minus every ambient `DSH_*` name (the harness owns that
 * namespace), then the caller's explicit entries (a string sets, `undefined` deletes).
 * Pure functions: no I/O, no mutation of their inputs.
 *
 * Known limitation (kept from the seed): the scrub is a name heuristic, not an
 * allow-list — `GH_PASSPHRASE` or `DATABASE_URL` with an embedded password survive.
 */

/** Prefix of the harness-managed environment namespace. */
export const DSH_ENV_PREFIX = 'DSH_'

/** Case-insensitive substrings that mark an environment name as credential-shaped. */
export const CREDENTIAL_NAME_MARKERS: readonly string[] = Object.freeze(['KEY', 'SECRET', 'TOKEN', 'PASSWORD'])

/** A built environment: only string values, null prototype (so `__proto__` is an ordinary name). */
export type EnvRecord = Record<string, string>

/** Caller overrides: a string sets the name, `undefined` is a tombstone that deletes it. */
export type EnvOverrides = Readonly<Record<string, string | undefined>>

/** True iff `name` contains KEY, SECRET, TOKEN or PASSWORD, case-insensitively. */
export function isCredentialShapedName(name: string): boolean {
  const upper = name.toUpperCase()
  return CREDENTIAL_NAME_MARKERS.some((marker) => upper.includes(marker))
}

/** True iff `name` lies in the managed `DSH_*` namespace, case-insensitively. */
export function isManagedEnvName(name: string): boolean {
  return name.toUpperCase().startsWith(DSH_ENV_PREFIX)
}

/**
 * Returns a copy of `parent` without credential-shaped names and without any `DSH_*`
 * name; PATH, HOME, locale and proxy variables survive. Undefined values are dropped.
 */
export function scrubbedParentEnv(parent: NodeJS.ProcessEnv = process.env): EnvRecord {
  const out: EnvRecord = Object.create(null) as EnvRecord
  for (const name of Object.keys(parent)) {
    const value = parent[name]
    if (typeof value !== 'string') continue
    if (isCredentialShapedName(name) || isManagedEnvName(name)) continue
    out[name] = value
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
      throw new TypeError(
        `env override ${JSON.stringify(name)} must be a string or undefined, got ${value === null ? 'null' : typeof value}`,
      )
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
