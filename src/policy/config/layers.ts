/**
 * Layering with provenance: each layer, broadest first, overrides what it gives (mode, writable
 * roots, network, each limit), and adds its hidden and protected paths to those before it (they
 * only ever grow). A project layer is the repository's, not the person's: it may only narrow what
 * the layers before it say, and one that would widen is refused (ConfigWidenedError), never clipped.
 */
import { ConfigWidenedError } from '../errors.js'
import { REMEDY_CONFIG_LAYERS } from '../remedies.js'
import { wideningsOf } from './narrowing.js'
import { LIMIT_FIELDS } from './schema.js'
import {
  type ConfigFileRecord,
  type ConfigLayer,
  type ConfigSettings,
  type ConfigSource,
  type ConfigSources,
  DEFAULT_CONFIG_SETTINGS,
  type ResolvedConfig,
} from './settings.js'

/** `paths` with `more` added (each once, in order). */
function union(paths: readonly string[], more: readonly string[] | undefined): readonly string[] {
  return more === undefined ? paths : [...new Set([...paths, ...more])]
}

/** `base` with `layer` applied: its mode, roots, network and limits override; its hidden and protected paths add. */
export function applyLayer(base: ConfigSettings, layer: Partial<ConfigSettings>): ConfigSettings {
  return {
    mode: layer.mode ?? base.mode,
    writableRoots: layer.writableRoots ?? base.writableRoots,
    hiddenPaths: union(base.hiddenPaths, layer.hiddenPaths),
    protectedPaths: union(base.protectedPaths, layer.protectedPaths),
    network: layer.network ?? base.network,
    limits: { ...base.limits, ...layer.limits },
  }
}

/** The sources after `layer` (from `source`) is applied over `sources`. */
function applySources(
  sources: ConfigSources,
  settings: ConfigSettings,
  layer: Partial<ConfigSettings>,
  source: ConfigSource,
): ConfigSources {
  const added = (field: 'hiddenPaths' | 'protectedPaths', before: readonly ConfigSource[]) =>
    settings[field].map((_, i) => before[i] ?? source)
  const limits = { ...sources.limits }
  for (const key of LIMIT_FIELDS) if (layer.limits?.[key] !== undefined) limits[key] = source
  return {
    mode: layer.mode === undefined ? sources.mode : source,
    writableRoots: layer.writableRoots === undefined ? sources.writableRoots : source,
    network: layer.network === undefined ? sources.network : source,
    hiddenPaths: added('hiddenPaths', sources.hiddenPaths),
    protectedPaths: added('protectedPaths', sources.protectedPaths),
    limits,
  }
}

const DEFAULT_SOURCE: ConfigSource = Object.freeze({ kind: 'default' })

/**
 * Applies `layers` in order over the built-in defaults, each setting remembering its source.
 * `root` is the workspace root relative paths are against when a project layer is checked.
 * Throws ConfigWidenedError when a project layer would widen what the layers before it say.
 */
export function layerConfig(layers: readonly ConfigLayer[], root: string | undefined): ResolvedConfig {
  let settings: ConfigSettings = { ...DEFAULT_CONFIG_SETTINGS }
  let sources: ConfigSources = {
    mode: DEFAULT_SOURCE,
    writableRoots: DEFAULT_SOURCE,
    network: DEFAULT_SOURCE,
    hiddenPaths: [],
    protectedPaths: [],
    limits: {},
  }
  const files: ConfigFileRecord[] = []
  for (const layer of layers) {
    const next = applyLayer(settings, layer.settings)
    const { kind, file } = layer.source
    if (kind === 'project') {
      const widenings = wideningsOf(settings, next, root)
      if (widenings.length > 0)
        throw new ConfigWidenedError(file ?? '.cordon.json', widenings, 'layers', REMEDY_CONFIG_LAYERS)
    }
    sources = applySources(sources, next, layer.settings, layer.source)
    settings = next
    if (file !== undefined && (kind === 'user' || kind === 'project' || kind === 'file'))
      files.push({ kind, path: file })
  }
  return Object.freeze({
    ...settings,
    workspaceRoot: root,
    sources: Object.freeze(sources),
    files: Object.freeze(files),
  })
}
