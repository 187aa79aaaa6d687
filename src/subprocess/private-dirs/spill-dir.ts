/**
 * The private directory that holds a host's spill files. Spill files carry complete
 * command output, so they live in one 0700 directory per host process, created only
 * when the first spill is needed, removed at disposal, and swept at a later start-up
 * when a crashed host left one behind.
 */
import fs from 'node:fs'
import path from 'node:path'
import { privateSubdir, sweepDeadHosts } from './layout.js'

/** Options for {@link SpillDirectory}. */
export interface SpillDirectoryOptions {
  /** Directory under which the private spill dir is created; defaults to cordon's private spill dir. */
  parent?: string | undefined
  /** Leave the directory (and its spill files) in place at {@link SpillDirectory.dispose}. */
  keep?: boolean | undefined
}

const PREFIX = 'cordon-spill-'
/** `cordon-spill-<pid>-<6 chars from mkdtemp>`. */
const NAME_PATTERN = /^cordon-spill-([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/

/** One host's lazily created private (0700) spill directory. */
export class SpillDirectory {
  readonly #parent: string | undefined
  readonly #keep: boolean
  #path: string | undefined
  #disposed = false

  /** Records where the directory will go; creates nothing yet. */
  constructor(options: SpillDirectoryOptions = {}) {
    this.#parent = options.parent === undefined ? undefined : path.resolve(options.parent)
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
    const dir = fs.mkdtempSync(path.join(this.#parent ?? privateSubdir('spill'), `${PREFIX}${process.pid}-`))
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
   * Removes `cordon-spill-<pid>-*` directories under `parent` (default: cordon's private spill
   * dir) whose host pid is provably gone; returns the removed paths. Never removes this
   * process's or a live process's directory, never follows a symlink, and only touches real
   * directories owned by our uid. Limitation: a host in another pid namespace that shares
   * `parent` looks dead from here.
   */
  static sweepStale(parent?: string): string[] {
    return sweepDeadHosts(path.resolve(parent ?? privateSubdir('spill')), NAME_PATTERN)
  }
}

export { isProcessAlive } from './layout.js'
