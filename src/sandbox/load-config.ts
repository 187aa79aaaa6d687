/**
 * The configuration as a host loads it: src/policy/config/load.ts with the digest record kept in
 * cordon's private dir (src/subprocess/private-dirs/config-record.ts). `LocalSandbox.create`, the
 * CLI's verbs and API callers all read it through here.
 */
import { type LoadConfigOptions, loadConfigWith } from '../policy/config/load.js'
import { layerConfig } from '../policy/config/layers.js'
import { isResolvedConfig, type ResolvedConfig } from '../policy/config/settings.js'
import { DiskConfigRecords } from '../subprocess/private-dirs/config-record.js'

/**
 * Reads the user config, the project config of `workspaceRoot` (`.cordon.json`) and `configFile`,
 * layers them over the defaults with `overrides` on top, and says where each setting came from.
 * Throws ConfigInvalidError for a malformed file (naming it and each field) and ConfigWidenedError
 * for a project config that would widen the layers before it or the one last loaded from it.
 */
export function loadConfig(options: LoadConfigOptions = {}): ResolvedConfig {
  return loadConfigWith(options, new DiskConfigRecords(options.env ?? process.env))
}

/** What a sandbox's `config` option may be: false (read none), what to read, or a config resolved already. */
export type ConfigOption = false | Omit<LoadConfigOptions, 'env'> | ResolvedConfig | undefined

/** The configuration `option` stands for, files read with `env` (default: the user config only). */
export function configFromOption(option: ConfigOption, env: NodeJS.ProcessEnv | undefined): ResolvedConfig {
  if (option === false) return layerConfig([], undefined)
  if (isResolvedConfig(option)) return option
  return loadConfig({ ...option, env })
}
