/**
 * What a configuration decides, layer by layer, and where each resolved setting came from. The
 * layers, broadest first: the built-in defaults, the user config, the project config, `--config
 * FILE`, then the caller's own (flags or API options). Paths stay as written (absolute, or relative
 * to the workspace root of each run): configPolicyInput (src/policy/config/policy-input.ts) makes
 * them absolute for one root.
 */
import { DEFAULT_NETWORK_POLICY } from '../defaults.js'
import {
  DEFAULT_SANDBOX_MODE,
  type NetworkPolicy,
  type ResourceLimits,
  type SandboxMode,
  isSandboxMode,
} from '../vocabulary.js'
import type { ConfigFileContent, LIMIT_FIELDS } from './schema.js'

/** Where a setting came from, broadest first. */
export const CONFIG_SOURCE_KINDS = ['default', 'user', 'project', 'file', 'flags', 'api'] as const

/** One source kind: `default` (built in), `user`, `project`, `file` (`--config FILE`), `flags` or `api`. */
export type ConfigSourceKind = (typeof CONFIG_SOURCE_KINDS)[number]

/** A setting's source: its kind and, for a file, which. */
export interface ConfigSource {
  readonly kind: ConfigSourceKind
  readonly file?: string | undefined
}

/** The settings a configuration decides. */
export interface ConfigSettings {
  mode: SandboxMode
  /** Extra writable roots under workspace-write: absolute, or relative to the workspace root. */
  writableRoots: readonly string[]
  /** Paths a command may not read (besides the default hidden set): absolute, or relative to the root. */
  hiddenPaths: readonly string[]
  /** Paths kept read-only inside writable roots (besides the defaults): absolute, or relative to the root. */
  protectedPaths: readonly string[]
  network: NetworkPolicy
  limits: ResourceLimits
}

/** The built-in defaults: read-only, the host's network, nothing extra hidden, protected or writable, no limits. */
export const DEFAULT_CONFIG_SETTINGS: Readonly<ConfigSettings> = Object.freeze({
  mode: DEFAULT_SANDBOX_MODE,
  writableRoots: Object.freeze([]),
  hiddenPaths: Object.freeze([]),
  protectedPaths: Object.freeze([]),
  network: DEFAULT_NETWORK_POLICY,
  limits: Object.freeze({}),
})

/** One layer: its source and the settings it gives (what it leaves out, the layers before decide). */
export interface ConfigLayer {
  source: ConfigSource
  settings: Partial<ConfigSettings>
}

/** Where each resolved setting came from; a hidden or protected path's source is at its index. */
export interface ConfigSources {
  mode: ConfigSource
  writableRoots: ConfigSource
  network: ConfigSource
  hiddenPaths: readonly ConfigSource[]
  protectedPaths: readonly ConfigSource[]
  limits: Partial<Record<(typeof LIMIT_FIELDS)[number], ConfigSource>>
}

/** A configuration file cordon read. */
export interface ConfigFileRecord {
  kind: 'user' | 'project' | 'file'
  path: string
}

/** The settings after every layer, where each came from, and the files read. */
export interface ResolvedConfig extends Readonly<ConfigSettings> {
  /** The workspace root whose project config was read (canonical), if any. */
  readonly workspaceRoot: string | undefined
  readonly sources: ConfigSources
  readonly files: readonly ConfigFileRecord[]
}

/** The settings a file's content gives (its `$schema` is only for editors). */
export function settingsOfContent(content: ConfigFileContent): Partial<ConfigSettings> {
  const out: Partial<ConfigSettings> = {}
  if (content.mode !== undefined) out.mode = content.mode
  if (content.writableRoots !== undefined) out.writableRoots = content.writableRoots
  if (content.hiddenPaths !== undefined) out.hiddenPaths = content.hiddenPaths
  if (content.protectedPaths !== undefined) out.protectedPaths = content.protectedPaths
  if (content.network !== undefined) out.network = content.network
  if (content.limits !== undefined) out.limits = content.limits
  return out
}

/** Whether `value` has a ResolvedConfig's shape (what the tools check an option against). */
export function isResolvedConfig(value: unknown): value is ResolvedConfig {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Partial<Record<keyof ResolvedConfig, unknown>>
  return (
    isSandboxMode(v.mode) &&
    [v.writableRoots, v.hiddenPaths, v.protectedPaths, v.files].every(Array.isArray) &&
    v.network !== undefined &&
    typeof v.limits === 'object' &&
    typeof v.sources === 'object' &&
    v.sources !== null
  )
}

/** How a source reads in `cordon explain`: `default`, `the command line`, or the file's path. */
export function describeSource(source: ConfigSource): string {
  if (source.file !== undefined) return source.file
  if (source.kind === 'flags') return 'the command line'
  if (source.kind === 'api') return 'the caller'
  return source.kind
}
