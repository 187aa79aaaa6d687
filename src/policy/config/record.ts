/**
 * The digest record's decision. A run that may write the workspace could rewrite, remove or replace
 * its project config between two runs, so cordon keeps, per workspace root, the digest and content
 * of the project config it last loaded (or that there was none), where no run can write
 * (src/subprocess/private-dirs/config-record.ts). An unchanged file is loaded; a changed, new or
 * removed one that is no wider than the recorded one is loaded and recorded; a wider one is refused.
 */
import type { ConfigWidening } from '../errors.js'
import { applyLayer } from './layers.js'
import { wideningsOf } from './narrowing.js'
import type { ConfigFileContent } from './schema.js'
import { type ConfigSettings, settingsOfContent } from './settings.js'

/** What is kept for one workspace root: the project config last loaded (null digest and content: none existed). */
export interface ConfigRecordEntry {
  /** The canonical workspace root. */
  root: string
  digest: string | null
  content: ConfigFileContent | null
}

/** Where the records are kept (the host's private dir, which no run can write). */
export interface ConfigRecordStore {
  /** The record of `root`, or undefined when there is none. */
  read(root: string): ConfigRecordEntry | undefined
  /** Keeps `entry` as the record of its root. */
  write(entry: ConfigRecordEntry): void
}

/** The record's word on the project config as it is now: keep the record, record the file anew, or refuse it. */
export type RecordVerdict =
  | { action: 'keep' }
  | { action: 'record' }
  | { action: 'refuse'; widenings: ConfigWidening[] }

/**
 * Judges the project config as it is now (`current`; null digest: there is none) against what was
 * recorded for its root, both laid over `base` (the defaults and the user config): a file the same
 * by digest is kept; one no wider is recorded; a wider one (a removed narrowing file included) is refused.
 */
export function checkAgainstRecord(
  recorded: ConfigRecordEntry | undefined,
  current: Omit<ConfigRecordEntry, 'root'>,
  base: ConfigSettings,
  root: string,
): RecordVerdict {
  if (recorded === undefined) return current.digest === null ? { action: 'keep' } : { action: 'record' }
  if (recorded.digest === current.digest) return { action: 'keep' }
  const was = applyLayer(base, settingsOfContent(recorded.content ?? {}))
  const is = applyLayer(base, settingsOfContent(current.content ?? {}))
  const widenings = wideningsOf(was, is, root)
  return widenings.length === 0 ? { action: 'record' } : { action: 'refuse', widenings }
}
