/**
 * The digest records on disk: `<private parent>/config-records/<hash>-<n>.json`, one per workspace
 * root, each holding the root, the digest and the content of the project config cordon last loaded
 * there (src/policy/config/record.ts decides with them). The private parent is 0700 and ours, and
 * no writable grant may hold it (src/sandbox/view/own-state.ts), so no run can forge a record.
 * A record is read only when it is a regular file of ours, mode 0600, opened O_NOFOLLOW, and
 * written whole (a fresh 0600 file renamed into place). The name's hash is FNV-1a, not a digest
 * (node:crypto would cost a run's start-up): a root whose hash collides with another's takes the
 * next free `<n>`, and each record names its root.
 */
import fs from 'node:fs'
import path from 'node:path'
import { ConfigInvalidError } from '../../policy/errors.js'
import type { ConfigRecordEntry, ConfigRecordStore } from '../../policy/config/record.js'
import type { ConfigFileContent } from '../../policy/config/schema.js'
import { privateSubdir } from './layout.js'
import { uniqueSuffix } from './unique-name.js'

/** Roots whose names share one hash that a record dir holds at most. */
const MAX_COLLISIONS = 8
/** The largest record read (a config is at most 64 KiB of JSON; its content re-encoded stays below this). */
const MAX_RECORD_BYTES = 512 * 1024

/** Two 32-bit FNV-1a lanes over the UTF-16 units of `text`, as 16 hex digits. */
export function rootHash(text: string): string {
  let a = 0x811c9dc5
  let b = 0x050c5d1f
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193) >>> 0
    b = Math.imul(b ^ (c + i), 0x01000193) >>> 0
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0')
}

/** Whether `v` is a record cordon wrote. */
function isRecord(v: unknown): v is ConfigRecordEntry & { version: 1 } {
  if (typeof v !== 'object' || v === null) return false
  const r = v as Record<string, unknown>
  const content = r.content
  return (
    r.version === 1 &&
    typeof r.root === 'string' &&
    (r.digest === null || typeof r.digest === 'string') &&
    (content === null || (typeof content === 'object' && !Array.isArray(content)))
  )
}

/** The record at `file`: undefined when absent; throws when it is not one cordon wrote. */
function readRecord(file: string): ConfigRecordEntry | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new ConfigInvalidError(file, [
      `(file): a config record cannot be opened (${(error as NodeJS.ErrnoException).code})`,
    ])
  }
  const refused = (why: string) =>
    new ConfigInvalidError(file, [`(file): not a config record cordon wrote (${why}); remove it to record afresh`])
  try {
    const st = fs.fstatSync(fd)
    const uid = process.getuid?.()
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0)
      throw refused('not a private regular file of ours')
    if (st.size > MAX_RECORD_BYTES) throw refused('too large')
    const parsed: unknown = JSON.parse(fs.readFileSync(fd, 'utf8'))
    if (!isRecord(parsed)) throw refused('unknown shape')
    return { root: parsed.root, digest: parsed.digest, content: parsed.content as ConfigFileContent | null }
  } catch (error) {
    if (error instanceof SyntaxError) throw refused('not JSON')
    throw error
  } finally {
    fs.closeSync(fd)
  }
}

/** The records of the host user, in the private parent that `env` names. */
export class DiskConfigRecords implements ConfigRecordStore {
  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  /** The record file of `root` (one whose record names it, else the first free name), and its record. */
  private slot(root: string): { file: string; record: ConfigRecordEntry | undefined } {
    const dir = privateSubdir('config-records', this.env)
    const hash = rootHash(root)
    for (let n = 0; n < MAX_COLLISIONS; n++) {
      const file = path.join(dir, `${hash}-${n}.json`)
      const record = readRecord(file)
      if (record === undefined || record.root === root) return { file, record }
    }
    throw new ConfigInvalidError(path.join(dir, `${hash}-*.json`), [
      `(file): ${MAX_COLLISIONS} other roots share this name; remove those records`,
    ])
  }

  /** The record of `root`, or undefined when none was kept. */
  read(root: string): ConfigRecordEntry | undefined {
    return this.slot(root).record
  }

  /** Keeps `entry` as the record of its root: a fresh 0600 file renamed over the old one. */
  write(entry: ConfigRecordEntry): void {
    const { file } = this.slot(entry.root)
    const temp = `${file}.${uniqueSuffix()}.new`
    fs.writeFileSync(temp, `${JSON.stringify({ version: 1, ...entry })}\n`, { mode: 0o600, flag: 'wx' })
    try {
      fs.renameSync(temp, file)
    } catch (error) {
      fs.rmSync(temp, { force: true })
      throw error
    }
  }
}
