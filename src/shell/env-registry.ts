/**
 * ShellEnvRegistry: the trusted `DSH_*` namespace for each shell execution.
 *
 * The registry owns the built-ins (`DSH_HOME`, `DSH_SHELL`, `DSH_SESSION_ID`, reserved);
 * plugins register contributors that declare their keys up front and resolve values per
 * execution. `collect()` returns a frozen snapshot sorted by key, which executors merge
 * last after dropping every ambient `DSH_*` variable.
 */
import os from 'node:os'
import path from 'node:path'
import { InvalidRequestError } from '../policy/errors.js'
import type {
  BashEnvContributor,
  BashEnvVariable,
  BashEnvVariableInfo,
  DshEnvironment,
  DshEnvironmentKey,
  ToolExecution,
} from './types.js'

// The subprocess seam owns the managed namespace's prefix; the shell seam re-exports it (seed 000).
export { DSH_ENV_PREFIX } from '../subprocess/env/scrub.js'

/** The shape every contributed key must have. */
export const DSH_KEY_PATTERN = /^DSH_[A-Z][A-Z0-9_]*$/

/** Keys the registry itself owns; no contributor may declare them. */
export const RESERVED_DSH_KEYS = Object.freeze(['DSH_HOME', 'DSH_SESSION_ID', 'DSH_SHELL'] as const)

/** Options for a ShellEnvRegistry. */
export interface ShellEnvRegistryOptions {
  /** Configured `DSH_HOME`; wins over `$DSH_HOME` and the default `~/.dsh`. */
  dshHome?: string | undefined
  /** Where `$DSH_HOME` is read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>> | undefined
  /** The home directory for the `~/.dsh` default (default `os.homedir()`). */
  homeDir?: string | undefined
}

interface Registration {
  readonly name: string
  readonly variables: readonly BashEnvVariable[]
  readonly keys: ReadonlySet<string>
  readonly resolve: BashEnvContributor['resolve']
}

/** Registry of the per-execution `DSH_*` variables (built-ins plus plugin contributors). */
export class ShellEnvRegistry {
  readonly #home: string
  readonly #contributors = new Map<string, Registration>()

  constructor(options: ShellEnvRegistryOptions = {}) {
    const ambient = (options.env ?? process.env).DSH_HOME
    this.#home =
      options.dshHome ??
      (ambient !== undefined && ambient.trim() !== '' ? ambient : path.join(options.homeDir ?? os.homedir(), '.dsh'))
  }

  /** The resolved `DSH_HOME`: config, else a non-blank `$DSH_HOME`, else `~/.dsh`. */
  get home(): string {
    return this.#home
  }

  /**
   * Registers one contributor; throws InvalidRequestError listing every problem (blank or
   * duplicate name, malformed, reserved, repeated or already-owned key, missing
   * description). Returns an idempotent disposer that unregisters it.
   */
  register(contributor: BashEnvContributor): () => void {
    const issues: string[] = []
    const name: unknown = contributor?.name
    if (typeof name !== 'string' || name.trim() === '') issues.push('name: must be a non-blank string')
    else if (this.#contributors.has(name))
      issues.push(`name: contributor ${JSON.stringify(name)} is already registered`)
    if (typeof contributor?.resolve !== 'function') issues.push('resolve: must be a function')
    const variables: unknown = contributor?.variables
    const declared: BashEnvVariable[] = []
    if (!Array.isArray(variables)) {
      issues.push('variables: must be an array')
    } else {
      const keys = new Set<string>()
      variables.forEach((variable: Partial<BashEnvVariable> | undefined, i) => {
        const key: unknown = variable?.key
        const description: unknown = variable?.description
        const where = `variables[${i}]`
        if (typeof key !== 'string' || !DSH_KEY_PATTERN.test(key)) {
          issues.push(`${where}.key: ${JSON.stringify(key)} must match DSH_[A-Z][A-Z0-9_]*`)
        } else if ((RESERVED_DSH_KEYS as readonly string[]).includes(key)) {
          issues.push(`${where}.key: ${key} is reserved for the registry`)
        } else if (keys.has(key)) {
          issues.push(`${where}.key: ${key} is declared twice`)
        } else {
          const owner = this.#ownerOf(key)
          if (owner !== undefined) issues.push(`${where}.key: ${key} is already declared by ${JSON.stringify(owner)}`)
        }
        if (typeof description !== 'string' || description.trim() === '') {
          issues.push(`${where}.description: must be a non-blank string`)
        }
        if (typeof key === 'string') keys.add(key)
        declared.push({ key: key as DshEnvironmentKey, description: description as string })
      })
    }
    if (issues.length > 0) throw new InvalidRequestError(issues, { context: 'invalid shell env contributor' })

    const registration: Registration = {
      name: name as string,
      variables: Object.freeze(declared.map((v) => Object.freeze({ ...v }))),
      keys: new Set(declared.map((v) => v.key)),
      resolve: contributor.resolve.bind(contributor),
    }
    this.#contributors.set(registration.name, registration)
    return () => {
      if (this.#contributors.get(registration.name) === registration) this.#contributors.delete(registration.name)
    }
  }

  /**
   * The frozen, key-sorted `DSH_*` snapshot for one execution: built-ins plus every
   * contributor's current values. Throws InvalidRequestError when a contributor returns an
   * undeclared key or a non-string value.
   */
  collect(execution: ToolExecution): DshEnvironment {
    const values = new Map<string, string>([
      ['DSH_HOME', this.#home],
      ['DSH_SHELL', '1'],
    ])
    if (execution.sessionId !== undefined) values.set('DSH_SESSION_ID', execution.sessionId)
    for (const registration of this.#contributors.values()) {
      const returned: unknown = registration.resolve(execution)
      if (returned === undefined) continue
      if (typeof returned !== 'object' || returned === null) {
        throw new InvalidRequestError([`resolve: must return an object of declared keys, got ${typeof returned}`], {
          context: `shell env contributor ${JSON.stringify(registration.name)}`,
        })
      }
      const issues: string[] = []
      for (const [key, value] of Object.entries(returned)) {
        if (value === undefined) continue
        if (!registration.keys.has(key)) issues.push(`${key}: not declared by this contributor`)
        else if (typeof value !== 'string') issues.push(`${key}: value must be a string, got ${typeof value}`)
        else values.set(key, value)
      }
      if (issues.length > 0) {
        throw new InvalidRequestError(issues, { context: `shell env contributor ${JSON.stringify(registration.name)}` })
      }
    }
    const sorted = [...values.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return Object.freeze(Object.fromEntries(sorted)) as DshEnvironment
  }

  /** Every plugin-declared variable, sorted by key, without running any resolver. */
  list(): BashEnvVariableInfo[] {
    const infos: BashEnvVariableInfo[] = []
    for (const registration of this.#contributors.values()) {
      for (const v of registration.variables)
        infos.push({ key: v.key, description: v.description, contributor: registration.name })
    }
    return infos.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  }

  #ownerOf(key: string): string | undefined {
    for (const registration of this.#contributors.values()) if (registration.keys.has(key)) return registration.name
    return undefined
  }
}
