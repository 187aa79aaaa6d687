/**
 * The policy flags `run`, `shell` and `explain` share, parsed with node:util parseArgs, and their
 * translation into a resolved policy: the configuration files first (src/policy/config/), the
 * flags over them.
 */
import { resolve as resolvePath } from 'node:path'
import type { ParseArgsConfig } from 'node:util'
import { type ResolvePolicyInput, resolvePolicy } from '../policy/resolve.js'
import { displayLine } from '../policy/display-text.js'
import { parseHostPattern } from '../policy/network/host-pattern.js'
import { isSandboxMode, type NetworkPolicy, type SandboxExecutionPolicy } from '../policy/vocabulary.js'
import { configPolicyInput } from '../policy/config/policy-input.js'
import type { ConfigSettings, ResolvedConfig } from '../policy/config/settings.js'
import { loadConfig } from '../sandbox/load-config.js'
import { ALL_SANDBOX_BACKENDS as SANDBOX_BACKENDS } from '../policy/backends.js'
import type { SandboxBackendName } from '../sandbox/probe.js'
import type { SubprocessEnvironmentMode } from '../subprocess/types.js'
import { LIMIT_HELP, LIMIT_OPTIONS, withLimits } from './limit-flags.js'
import { displayShellWord } from './shell-quote.js'
import { workingDirectory } from './invocation/cwd.js'
import { type CliOptions, type ParsedWords, parseWords } from './invocation/parse.js'
import { UsageError } from './usage-error.js'

/** The parseArgs options of the policy flags. */
export const POLICY_OPTIONS = {
  mode: { type: 'string', short: 'm' },
  root: { type: 'string' },
  writable: { type: 'string', multiple: true },
  network: { type: 'string' },
  'allow-host': { type: 'string', multiple: true },
  'deny-host': { type: 'string', multiple: true },
  backend: { type: 'string' },
  'require-full': { type: 'boolean' },
  environment: { type: 'string' },
  'keep-env': { type: 'string', multiple: true },
  hide: { type: 'string', multiple: true },
  show: { type: 'string', multiple: true },
  'no-default-hidden': { type: 'boolean' },
  protect: { type: 'string', multiple: true },
  unprotect: { type: 'string', multiple: true },
  'no-default-protected': { type: 'boolean' },
  'allow-socket': { type: 'string', multiple: true },
  'host-caches': { type: 'boolean' },
  'shared-memory': { type: 'boolean' },
  ...LIMIT_OPTIONS,
  reprobe: { type: 'boolean' },
  config: { type: 'string' },
  'accept-config': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

/** The policy flags' help lines. */
export const POLICY_HELP = `  -m, --mode MODE        read-only (default) | workspace-write | danger-full-access
      --root DIR         workspace root (default: the current directory)
      --writable DIR     an extra writable root under workspace-write (repeatable)
      --network POLICY   inherit (default) | deny
      --allow-host HOST  cut the network but let the command reach HOST through cordon's proxy
                         (repeatable; a name, *.domain, an IP address, each with an optional :port)
      --deny-host HOST   never reach HOST, even when an --allow-host pattern covers it (repeatable)
      --backend NAME     pin the sandbox backend (${SANDBOX_BACKENDS.join(', ')})
      --require-full     refuse a backend that enforces the mode only partially
      --environment ENV  scrubbed (default: no credentials) | minimal (PATH, HOME, LANG… only)
      --keep-env NAME    pass the variable NAME on although the scrub would remove it (repeatable)
      --hide PATH        hide a path from the command, besides the default set (repeatable)
      --show NAME        do not hide the default entry NAME (repeatable; see cordon explain)
      --no-default-hidden  hide only what --hide names
      --protect PATH     keep PATH read-only inside a writable root (relative: to the root)
      --unprotect PATH   leave a default protected path writable (relative: to the root; repeatable)
      --no-default-protected  do not protect git's hooks and config, editor and shell files, cordon
      --allow-socket PATH  keep a host unix socket reachable under bubblewrap (repeatable)
      --host-caches      let workspace-write use the host's package caches (default: cordon's own)
      --shared-memory    the command needs /dev/shm (prefers bubblewrap, which gives a private one)
${LIMIT_HELP}
      --reprobe          probe the backends again instead of using the cached verdict
      --config FILE      read FILE too, over the user config and the project's .cordon.json
      --accept-config    accept a .cordon.json that changed wider since cordon last read it
      --json             machine-readable output on stdout`

/** Parsed policy flags. */
export interface PolicyFlags {
  policy: SandboxExecutionPolicy
  backends: SandboxBackendName[] | undefined
  json: boolean
  environment: SubprocessEnvironmentMode
  /** `--keep-env`: variables passed on whatever the scrub says (names only). */
  keepEnv: string[]
  /** The probe verdict: cached on disk (`use`), or probed again and cached (`refresh`). */
  probeCache: 'use' | 'refresh'
  /** The configuration the policy came from, with each setting's source (`cordon explain` shows them). */
  config: ResolvedConfig
}

/**
 * Parses `args` with the policy options and `extra` (`takes.command`: the verb runs a command
 * given after --); each mistake throws a UsageError naming the flag (src/cli/invocation/parse.ts).
 */
export function parseWith(args: string[], extra: CliOptions, takes: { command?: boolean } = {}): ParsedWords {
  return parseWords(args, { ...POLICY_OPTIONS, ...extra }, takes)
}

/** The settings the flags give, as the configuration's last layer (`flags`): what they leave out, the config files decide. */
function flagSettings(values: Record<string, unknown>, cwd: string): Partial<ConfigSettings> {
  const mode = values.mode as string | undefined
  if (mode !== undefined && !isSandboxMode(mode))
    throw new UsageError(`--mode: unknown mode "${displayLine(mode)}" (read-only, workspace-write, danger-full-access)`)
  const network = networkFrom(values)
  const writable = ((values.writable as string[] | undefined) ?? []).map((p) => resolvePath(cwd, p))
  const hide = ((values.hide as string[] | undefined) ?? []).map((p) => resolvePath(cwd, p))
  const protect = (values.protect as string[] | undefined) ?? []
  return {
    ...(mode === undefined ? {} : { mode }),
    ...(network === undefined ? {} : { network }),
    ...(writable.length > 0 ? { writableRoots: writable } : {}),
    ...(hide.length > 0 ? { hiddenPaths: hide } : {}),
    ...(protect.length > 0 ? { protectedPaths: protect } : {}),
  }
}

/** The configuration under the flags: user, project (of `root`) and `--config FILE`, the flags on top. */
function configUnder(
  values: Record<string, unknown>,
  cwd: string,
  root: string,
  env: NodeJS.ProcessEnv,
): ResolvedConfig {
  const file = values.config as string | undefined
  return loadConfig({
    workspaceRoot: root,
    configFile: file === undefined ? undefined : resolvePath(cwd, file),
    env,
    acceptChanged: values['accept-config'] === true,
    overrides: flagSettings(values, cwd),
    overridesFrom: 'flags',
  })
}

/**
 * Turns parsed flag values into a resolved policy over the configuration files (the flags
 * override them); bad flag values throw UsageError naming the flag, a bad config file
 * ConfigInvalidError or ConfigWidenedError.
 */
export function policyFrom(
  values: Record<string, unknown>,
  cwd = workingDirectory(values.root),
  env = process.env,
): PolicyFlags {
  refuseNulPaths(values)
  const backend = values.backend as string | undefined
  if (backend !== undefined && !(SANDBOX_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`--backend: unknown backend "${displayLine(backend)}" (${SANDBOX_BACKENDS.join(', ')})`)
  }
  const environment = (values.environment as string | undefined) ?? 'scrubbed'
  if (environment !== 'scrubbed' && environment !== 'minimal')
    throw new UsageError(`--environment: must be scrubbed or minimal, got "${displayLine(environment)}"`)
  const root = values.root === undefined ? undefined : resolvePath(cwd, values.root as string)
  const config = configUnder(values, cwd, root ?? cwd, env)
  if (values.writable !== undefined && config.mode !== 'workspace-write')
    throw new UsageError('--writable: only meaningful with --mode workspace-write')
  let policy: SandboxExecutionPolicy
  try {
    policy = resolvePolicy({
      cwd,
      workspaceRoot: root,
      ...configPolicyInput(config),
      ...otherPolicyFields(values, cwd),
    })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  return {
    policy: withLimits(policy, values),
    config,
    backends: backend === undefined ? undefined : [backend as SandboxBackendName],
    json: values.json === true,
    environment,
    keepEnv: keepEnvFrom(values),
    probeCache: values.reprobe === true ? 'refresh' : 'use',
  }
}

/** `--root` and `--config` each name a path: a NUL byte in one is a usage error naming the flag (no path holds one). */
function refuseNulPaths(values: Record<string, unknown>): void {
  for (const flag of ['root', 'config'] as const) {
    const value = values[flag]
    if (typeof value === 'string' && value.includes('\0'))
      throw new UsageError(`--${flag}: ${displayShellWord(value)} holds a NUL byte, which no path can`)
  }
}

/** The policy fields no configuration decides: enforcement, default hidden entries, opt-outs, sockets, caches, /dev/shm. */
function otherPolicyFields(values: Record<string, unknown>, cwd: string): Partial<ResolvePolicyInput> {
  const show = (values.show as string[] | undefined) ?? []
  const sockets = ((values['allow-socket'] as string[] | undefined) ?? []).map((p) => resolvePath(cwd, p))
  const unprotect = (values.unprotect as string[] | undefined) ?? []
  return {
    ...(values['require-full'] ? { requireEnforcement: 'full' as const } : {}),
    ...(values['no-default-hidden']
      ? { hiddenDefaults: false }
      : show.length > 0
        ? { hiddenDefaults: { except: show } }
        : {}),
    ...(unprotect.length > 0 ? { unprotectedPaths: unprotect } : {}),
    ...(values['no-default-protected'] ? { protectedDefaults: false } : {}),
    ...(sockets.length > 0 ? { allowUnixSockets: sockets } : {}),
    ...(values['host-caches'] ? { cacheRoots: 'host' as const } : {}),
    ...(values['shared-memory'] ? { sharedMemory: true } : {}),
  }
}

/**
 * `--network`, `--allow-host` and `--deny-host` as the policy's network: any `--allow-host` makes
 * an allow-list. A deny list only narrows an allow-list, and an allow-list is neither inherit nor
 * deny: either combination is a usage error, as is every pattern that does not parse (all named).
 * Undefined when no flag names the network (the configuration decides).
 */
function networkFrom(values: Record<string, unknown>): NetworkPolicy | undefined {
  const given = values.network as string | undefined
  if (given !== undefined && given !== 'inherit' && given !== 'deny')
    throw new UsageError(`--network: must be inherit or deny, got "${displayLine(given)}"`)
  const allow = (values['allow-host'] as string[] | undefined) ?? []
  const deny = (values['deny-host'] as string[] | undefined) ?? []
  if (allow.length === 0) {
    if (deny.length > 0)
      throw new UsageError(
        '--deny-host: only narrows an allow-list; give the hosts to reach with --allow-host (or --network deny to reach none)',
      )
    return given
  }
  if (given !== undefined)
    throw new UsageError(
      `--allow-host: an allow-list is its own network policy; drop --network ${given} (--allow-host already cuts every other host)`,
    )
  const bad = [...allow.map((h) => ['--allow-host', h]), ...deny.map((h) => ['--deny-host', h])].flatMap(
    ([flag, host]) => {
      const parsed = parseHostPattern(host as string)
      return 'error' in parsed ? [`${flag} ${displayShellWord(host as string)}: ${displayLine(parsed.error)}`] : []
    },
  )
  if (bad.length === 1) throw new UsageError(bad[0] as string)
  if (bad.length > 1) throw new UsageError(`${bad.length} host patterns do not parse:\n  ${bad.join('\n  ')}`)
  return deny.length > 0 ? { allow, deny } : { allow }
}

/** `--keep-env` as names; a word that cannot name a variable (empty, or holding `=` or NUL) throws UsageError. */
function keepEnvFrom(values: Record<string, unknown>): string[] {
  const names = (values['keep-env'] as string[] | undefined) ?? []
  const bad = names.find((n) => !/^[^=\0]+$/.test(n))
  if (bad !== undefined)
    throw new UsageError(`--keep-env: "${displayLine(bad)}" is not a variable name (empty, or holds = or NUL)`)
  return names
}

/** The `--keep-env` names as explicit entries of the command's environment (a name `env` lacks is left out). */
export function keptEnv(names: readonly string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = env[name]
    if (value !== undefined) out[name] = value
  }
  return out
}
