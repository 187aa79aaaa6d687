/**
 * Loading a configuration: the user config, the project config of the workspace root (checked to
 * narrow the layers before it, then against the digest record), `--config FILE`, then the caller's
 * own settings, layered with provenance. With no config file at all nothing but three failed
 * opens happens: neither zod nor node:crypto loads.
 */
import fs from 'node:fs'
import path from 'node:path'
import { ConfigInvalidError, ConfigWidenedError } from '../errors.js'
import { REMEDY_CONFIG_CHANGED, REMEDY_CONFIG_LAYERS } from '../remedies.js'
import { canonicalPath } from '../resolve.js'
import { userConfigFile } from '../state/config-dir.js'
import { applyLayer, layerConfig } from './layers.js'
import { wideningsOf } from './narrowing.js'
import { parseConfigText } from './parse.js'
import { readConfigFile } from './read-file.js'
import { checkAgainstRecord, type ConfigRecordStore } from './record.js'
import type { ConfigFileContent } from './schema.js'
import {
  type ConfigLayer,
  type ConfigSettings,
  DEFAULT_CONFIG_SETTINGS,
  type ResolvedConfig,
  settingsOfContent,
} from './settings.js'

/** The project config's name, at the workspace root. */
export const PROJECT_CONFIG_NAME = '.cordon.json'

/** What loadConfig reads. */
export interface LoadConfigOptions {
  /** The workspace root whose `.cordon.json` is read (absolute); absent: no project config. */
  workspaceRoot?: string | undefined
  /** One more file (`--config FILE`), the person's own: over the user and project configs. */
  configFile?: string | undefined
  /** The environment the user config's place comes from; default `process.env`. */
  env?: NodeJS.ProcessEnv | undefined
  /** Accept a project config that changed wider since it was last loaded, and record it as it is now. */
  acceptChanged?: boolean | undefined
  /** The caller's own settings (flags or API options), over every file. */
  overrides?: Partial<ConfigSettings> | undefined
  /** Whose `overrides` are: the command line's (`flags`) or the caller's (`api`, the default). */
  overridesFrom?: 'flags' | 'api' | undefined
}

/**
 * Whether `file` lies behind a directory this process may not search and does not own: another
 * user's home (a command run as uid 65534 with root's HOME), so no config of this user's is there.
 */
function behindAnotherUsersDirectory(file: string): boolean {
  const uid = process.geteuid?.()
  if (uid === undefined) return false
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    try {
      fs.accessSync(dir, fs.constants.X_OK)
      return false
    } catch {
      // Not searchable: whose is it? (Its own stat needs only its parent searchable.)
      try {
        if (fs.statSync(dir).uid !== uid) return true
      } catch {
        // Its parent is not searchable either: look further up.
      }
    }
    if (path.dirname(dir) === dir) return false
  }
}

/** A file's layer, or undefined when the file does not exist (or, for the user config, lies in another user's home). */
function fileLayer(kind: 'user' | 'file', file: string | undefined, followLinks: boolean): ConfigLayer | undefined {
  if (kind === 'user' && file !== undefined && behindAnotherUsersDirectory(file)) return undefined
  const read = file === undefined ? undefined : readConfigFile(file, { followLinks })
  if (read === undefined) return undefined
  return { source: { kind, file: read.path }, settings: settingsOfContent(parseConfigText(read.path, read.text)) }
}

/**
 * The project config of `root` as a layer (undefined when there is none and none was recorded),
 * after both checks: no wider than `base`, and no wider than the recorded one unless accepted.
 */
function projectLayer(
  root: string,
  base: ConfigSettings,
  store: ConfigRecordStore | undefined,
  acceptChanged: boolean,
): ConfigLayer | undefined {
  const file = path.join(root, PROJECT_CONFIG_NAME)
  const read = readConfigFile(file, { followLinks: false })
  const content: ConfigFileContent | null = read === undefined ? null : parseConfigText(file, read.text)
  const settings = settingsOfContent(content ?? {})
  const wider = wideningsOf(base, applyLayer(base, settings), root)
  if (wider.length > 0) throw new ConfigWidenedError(file, wider, 'layers', REMEDY_CONFIG_LAYERS)
  if (store !== undefined) {
    const current = { digest: read?.digest ?? null, content }
    const verdict = checkAgainstRecord(store.read(root), current, base, root)
    if (verdict.action === 'refuse' && !acceptChanged)
      throw new ConfigWidenedError(file, verdict.widenings, 'record', REMEDY_CONFIG_CHANGED)
    if (verdict.action !== 'keep') store.write({ root, ...current })
  }
  return read === undefined ? undefined : { source: { kind: 'project', file }, settings }
}

/**
 * Reads and layers the configuration: defaults, user config, project config (`workspaceRoot`),
 * `configFile`, then `overrides`; `store` keeps the digest record (none: no record is checked).
 * Throws ConfigInvalidError (a malformed file, a symlinked project config) or ConfigWidenedError.
 */
export function loadConfigWith(options: LoadConfigOptions, store: ConfigRecordStore | undefined): ResolvedConfig {
  const env = options.env ?? process.env
  const layers: ConfigLayer[] = []
  const user = fileLayer('user', userConfigFile(env), false)
  if (user !== undefined) layers.push(user)
  const root = options.workspaceRoot === undefined ? undefined : canonicalPath(options.workspaceRoot)
  if (root !== undefined) {
    const base = user === undefined ? DEFAULT_CONFIG_SETTINGS : applyLayer(DEFAULT_CONFIG_SETTINGS, user.settings)
    const project = projectLayer(root, base, store, options.acceptChanged === true)
    if (project !== undefined) layers.push(project)
  }
  const file = fileLayer('file', options.configFile, true)
  // A file the person names must be there: a typo must not run under the defaults.
  if (options.configFile !== undefined && file === undefined)
    throw new ConfigInvalidError(options.configFile, ['(file): does not exist'])
  if (file !== undefined) layers.push(file)
  if (options.overrides !== undefined)
    layers.push({ source: { kind: options.overridesFrom ?? 'api' }, settings: options.overrides })
  return layerConfig(layers, root)
}
