/**
 * Where each setting came from, as `cordon explain` reports it: in `--json` a `sources` object
 * (each setting's value, its source kind and file), as text one line per setting, e.g.
 * `mode: workspace-write (from /home/u/.config/cordon/config.json)`.
 */
import { displayLine } from '../display-text.js'
import { LIMIT_FIELDS } from './schema.js'
import type { ConfigFileRecord, ConfigSource, ResolvedConfig } from './settings.js'

/** One setting's value and where it came from. */
export interface SettingSource {
  value: unknown
  from: ConfigSource['kind']
  file?: string
}

/** Every setting with its source, and the files read. */
export interface SourcesReport {
  mode: SettingSource
  writableRoots: SettingSource
  network: SettingSource
  hiddenPaths: SettingSource[]
  protectedPaths: SettingSource[]
  limits: Record<string, SettingSource>
  files: readonly ConfigFileRecord[]
}

function entry(value: unknown, source: ConfigSource): SettingSource {
  return { value, from: source.kind, ...(source.file === undefined ? {} : { file: source.file }) }
}

/** `config`'s settings, each with its source, for the `sources` object of `cordon explain --json`. */
export function sourcesReport(config: ResolvedConfig): SourcesReport {
  const { sources } = config
  const limits: Record<string, SettingSource> = {}
  for (const key of LIMIT_FIELDS) {
    const source = sources.limits[key]
    if (config.limits[key] !== undefined && source !== undefined) limits[key] = entry(config.limits[key], source)
  }
  return {
    mode: entry(config.mode, sources.mode),
    writableRoots: entry(config.writableRoots, sources.writableRoots),
    network: entry(config.network, sources.network),
    hiddenPaths: config.hiddenPaths.map((p, i) => entry(p, sources.hiddenPaths[i] ?? { kind: 'default' })),
    protectedPaths: config.protectedPaths.map((p, i) => entry(p, sources.protectedPaths[i] ?? { kind: 'default' })),
    limits,
    files: config.files,
  }
}

/** `(default)`, `(from the command line)`, `(from the caller)` or `(from FILE)`. */
function fromText(s: SettingSource): string {
  if (s.file !== undefined) return `(from ${displayLine(s.file)})`
  if (s.from === 'flags') return '(from the command line)'
  if (s.from === 'api') return '(from the caller)'
  return `(${s.from})`
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return displayLine(value)
  if (Array.isArray(value) && value.length === 0) return 'none'
  return displayLine(JSON.stringify(value))
}

/** The text lines of a sources report (none for a report without one), every path escaped. */
export function sourceLines(report: SourcesReport | undefined): string[] {
  if (report === undefined) return []
  const line = (name: string, s: SettingSource) => `  ${name}: ${valueText(s.value)} ${fromText(s)}`
  return [
    `settings (${report.files.length === 0 ? 'no config file' : `config files: ${report.files.map((f) => displayLine(f.path)).join(', ')}`}):`,
    line('mode', report.mode),
    line('writable roots', report.writableRoots),
    line('network', report.network),
    ...report.hiddenPaths.map((s) => line('hidden', s)),
    ...report.protectedPaths.map((s) => line('protected', s)),
    ...Object.entries(report.limits).map(([key, s]) => line(`limits.${key}`, s)),
  ]
}
