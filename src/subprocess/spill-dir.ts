/**
 * The private directory that holds a host's spill files. Spill files carry complete
 * command output, so they live in one 0700 directory per host process, created only
 * when the first spill is needed, removed at disposal, and swept at a later start-up
 * when a crashed host left one behind.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** Options for {@link SpillDirectory}. */
export interface SpillDirectoryOptions {
  /** Directory under which the private spill dir is created; defaults to `os.tmpdir()`. */
  parent?: string | undefined
  /** Leave the directory (and its spill files) in place at {@link SpillDirectory.dispose}. */
  keep?: boolean | undefined
}

const PREFIX = 'cordon-spill-'
/** `cordon-spill-<pid>-<6 chars from mkdtemp>`. */
const NAME_PATTERN = /^cordon-spill-([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/

/** One host's lazily created private (0700) spill directory. */
export class SpillDirectory {
  readonly #parent: string
  readonly #keep: boolean
  #path: string | undefined
  #disposed = false

  /** Records where the directory will go; creates nothing yet. */
  constructor(options: SpillDirectoryOptions = {}) {
    this.#parent = path.resolve(options.parent ?? os.tmpdir())
    this.#keep = options.keep ?? false
  }

  /** Whether the directory has been created (and not yet disposed). */
  get created(): boolean {
    return this.#path !== undefined
  }

  /**
   * Returns the directory path, creating `cordon-spill-<hostpid>-XXXXXX` (mode 0700) on
   * first call. Throws after {@link dispose} or when creation fails.
   */
  path(): string {
    if (this.#disposed) throw new Error('SpillDirectory is disposed')
    if (this.#path !== undefined) return this.#path
    const dir = fs.mkdtempSync(path.join(this.#parent, `${PREFIX}${process.pid}-`))
    try {
      // mkdtemp already uses 0700; chmod makes it exact whatever the umask did.
      fs.chmodSync(dir, 0o700)
    } catch (error) {
      fs.rmSync(dir, { recursive: true, force: true })
      throw error
    }
    this.#path = dir
    return dir
  }

  /** Removes the directory and everything in it unless `keep`; idempotent; never throws. */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    const dir = this.#path
    this.#path = undefined
    if (dir === undefined || this.#keep) return
    try {
      fs.rmSync(dir, { recursive: true, force: true })
    } catch {
      // Best effort: a directory we cannot remove is left for the next sweep.
    }
  }

  /**
   * Removes `cordon-spill-<pid>-*` directories under `parent` (default `os.tmpdir()`)
   * whose host pid is provably gone; returns the removed paths. Never removes this
   * process's or a live process's directory, never follows a symlink, and only touches
   * real directories owned by our uid. Limitation: a host in another pid namespace that
   * shares `parent` looks dead from here.
   */
  static sweepStale(parent?: string): string[] {
    const base = path.resolve(parent ?? os.tmpdir())
    const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
    const removed: string[] = []
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(base, { withFileTypes: true })
    } catch {
      return removed
    }
    for (const entry of entries) {
      const match = NAME_PATTERN.exec(entry.name)
      if (match === null) continue
      const pid = Number(match[1])
      if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue
      const full = path.join(base, entry.name)
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(full)
      } catch {
        continue
      }
      if (!stat.isDirectory() || stat.isSymbolicLink()) continue
      if (uid !== undefined && stat.uid !== uid) continue
      if (isProcessAlive(pid)) continue
      try {
        // rmSync unlinks symlinks found inside; it never descends through them.
        fs.rmSync(full, { recursive: true, force: true })
        removed.push(full)
      } catch {
        // Raced with another sweeper or lacking permission: leave it.
      }
    }
    return removed
  }
}

/**
 * True unless `pid` is provably gone: `kill(pid, 0)` reports ESRCH and, where /proc
 * exists, `/proc/<pid>` is absent. Any doubt counts as alive.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') return true // EPERM: exists, not ours
  }
  if (fs.existsSync('/proc/self')) {
    return fs.existsSync(`/proc/${pid}`)
  }
  return false
}
