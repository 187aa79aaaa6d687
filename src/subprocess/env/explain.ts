/**
 * What `cordon explain` says about the environment: which parent names a child would not see and
 * the rule behind each. Names and rules only; a value is never copied into the answer.
 */
import { type EnvDropRule, type EnvOverrides, envDropReason } from './scrub.js'
import type { SubprocessEnvironmentMode } from '../types.js'

/** One parent name the child will not see, and why. */
export interface EnvDrop {
  readonly name: string
  readonly rule: EnvDropRule | 'caller-tombstone'
  readonly detail: string
}

/** Options of {@link explainEnvScrub}: the spec's `environment` and `env`, as the runtime gets them. */
export interface ExplainEnvOptions {
  environment?: SubprocessEnvironmentMode | undefined
  /** The caller's explicit entries: a string re-adds a dropped name, `undefined` drops one. */
  env?: EnvOverrides | undefined
}

/**
 * The parent names a child spawned with `options` would not see, sorted by name, each with the rule
 * that dropped it; a name the caller sets explicitly is not listed (it survives), one the caller
 * tombstones is. Agrees with `scrubbedParentEnv` + `mergeEnv` by construction.
 */
export function explainEnvScrub(parent: NodeJS.ProcessEnv = process.env, options: ExplainEnvOptions = {}): EnvDrop[] {
  const mode = options.environment ?? 'scrubbed'
  const overrides = options.env
  const dropped: EnvDrop[] = []
  for (const name of Object.keys(parent)) {
    const value = parent[name]
    if (typeof value !== 'string') continue
    const explicit = overrides !== undefined && Object.hasOwn(overrides, name)
    // A caller's explicit string always survives, so it is not a drop.
    if (explicit && typeof overrides[name] === 'string') continue
    const reason = envDropReason(name, value, mode)
    if (reason !== undefined) dropped.push({ name, rule: reason.rule, detail: reason.detail })
    else if (explicit)
      dropped.push({ name, rule: 'caller-tombstone', detail: 'removed by the caller (undefined entry)' })
  }
  return dropped.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** The rules that remove a credential (what `--keep-env NAME` would pass on). */
const CREDENTIAL_RULES: ReadonlySet<EnvDrop['rule']> = new Set(['agent-socket', 'credential-name', 'credential-value'])

/**
 * The parent names a child spawned with `options` does not see because they look like credentials
 * (the harness's `DSH_*`, the minimal allow-list, the caller's own removals and cordon's own
 * settings, `CORDON_*`, left out), sorted. Names only: what a failed run reports
 * (`ShellSandboxInfo.removedEnv`).
 */
export function removedCredentialNames(
  parent: NodeJS.ProcessEnv = process.env,
  options: ExplainEnvOptions = {},
): string[] {
  return explainEnvScrub(parent, options)
    .filter((d) => CREDENTIAL_RULES.has(d.rule) && !d.name.startsWith('CORDON_'))
    .map((d) => d.name)
}
