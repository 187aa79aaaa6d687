/**
 * cordon's private directories: one parent per user, outside the shared temp dirs, mode 0700.
 *
 *   <parent>/                           $CORDON_PRIVATE_DIR, else $XDG_RUNTIME_DIR/cordon, else
 *                                       $HOME/.cache/cordon, else <os.tmpdir()>/cordon-<uid>
 *     sessions/<pid>-<label>-XXXXXX/    one sandbox session: m/t/ (its commands' TMPDIR, writable
 *       m/t/  m/shm/  spill/            by them; t/.run/, mode 0700, their XDG_RUNTIME_DIR),
 *                                       m/shm/ (their /dev/shm under bubblewrap), spill/ (its
 *                                       runs' spill files, readable by them); m/ is the one
 *                                       bounded tmpfs of both where the host mounts one (names
 *                                       short: tmux's socket path in t/.run fits 108 bytes);
 *                                       removed when the sandbox is disposed, swept at a later
 *                                       start-up once <pid> is gone
 *     spill/cordon-spill-<pid>-XXXXXX/  a runtime's spill files for runs outside any session
 *     cache/                            the cache shared by confined runs only (never by
 *                                       unconfined ones)
 *     cli-spill/                        spill files of `cordon run`, kept after it exits (its
 *                                       --json names them), swept by age at a later start
 *     probe-<uid>.json                  the CLI's cached probe verdict (src/sandbox/probe/disk-cache.ts)
 *     config-records/<hash>-<n>.json    per workspace root, the project config last loaded
 *                                       (src/subprocess/private-dirs/config-record.ts)
 *
 * No confined command sees the parent: each sees only its own session's dirs and the cache (the
 * sandbox hides the rest). A parent that is a symlink, or not ours, or open to others is refused
 * (a confined command with a writable $HOME could have planted one), and the next candidate used.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { removeTreeSync } from './remove-tree.js'
import { detachTemp, mountTemp } from './temp-mount.js'

/** Whose private directories: a uid (and gid) other than this process's, for a command run as another user. */
export interface PrivateOwner {
  uid: number
  gid: number
  /** Their home, when they have one. */
  home?: string | undefined
}

const selfUid = () => process.getuid?.()
const isOther = (owner: PrivateOwner | undefined): owner is PrivateOwner =>
  owner !== undefined && owner.uid !== selfUid()

/**
 * The parent's location, in order of preference (the environment decides). For another user
 * (a root host running a command as the workspace owner) it is a dir of theirs in the OS temp
 * dir, which they can reach ($CORDON_PRIVATE_DIR-uid<UID> when that is set).
 */
export function privateParentCandidates(env: NodeJS.ProcessEnv = process.env, owner?: PrivateOwner): string[] {
  if (isOther(owner)) {
    if (env.CORDON_PRIVATE_DIR) return [`${path.resolve(env.CORDON_PRIVATE_DIR)}-uid${owner.uid}`]
    const theirs = owner.home && path.isAbsolute(owner.home) ? [path.join(owner.home, '.cache', 'cordon')] : []
    return [...theirs, ...sharedTempCandidates(owner.uid)]
  }
  const out: string[] = []
  if (env.CORDON_PRIVATE_DIR) out.push(path.resolve(env.CORDON_PRIVATE_DIR))
  if (env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR)) out.push(path.join(env.XDG_RUNTIME_DIR, 'cordon'))
  const home = env.HOME ?? os.homedir()
  if (home && path.isAbsolute(home) && home !== '/') out.push(path.join(home, '.cache', 'cordon'))
  out.push(...sharedTempCandidates(process.getuid?.()))
  return out
}

/**
 * The last resorts, in a shared temp dir: /var/tmp first (/tmp churns, and the read view watches
 * the parent of what it hides), then the OS temp dir.
 */
function sharedTempCandidates(uid: number | undefined): string[] {
  const name = `cordon-${uid ?? 'user'}`
  const out = fs.existsSync('/var/tmp') ? [path.join('/var/tmp', name)] : []
  out.push(path.join(os.tmpdir(), name))
  return out
}

/** Why a directory cannot be a private directory (of `uid`), or undefined when it can. */
function unfitness(dir: string, uid = selfUid()): string | undefined {
  let st: fs.Stats
  try {
    st = fs.lstatSync(dir)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'cannot stat'
  }
  if (st.isSymbolicLink()) return 'is a symlink'
  if (!st.isDirectory()) return 'is not a directory'
  if (uid !== undefined && st.uid !== uid) return `is owned by uid ${st.uid}`
  if ((st.mode & 0o077) !== 0) return `has mode ${(st.mode & 0o777).toString(8)}`
  return undefined
}

/** Creates `dir` (mode 0700, given to `owner`) if absent; returns why it is unfit as a private directory, if it is. */
function makePrivate(dir: string, owner?: PrivateOwner): string | undefined {
  try {
    if (isOther(owner)) createForOwner(dir, owner)
    else {
      fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 })
      fs.mkdirSync(dir, { mode: 0o700 })
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EEXIST') return code ?? 'cannot create'
  }
  return unfitness(dir, owner?.uid ?? selfUid())
}

/**
 * Makes `dir` for another user in one step: a staging dir is made, given to them and renamed into
 * place, so a concurrent cordon never sees it ours (and refuses it) between mkdir and chown.
 * Throws EEXIST when `dir` is there already.
 */
function createForOwner(dir: string, owner: PrivateOwner): void {
  const parent = path.dirname(dir)
  // Missing ancestors (~/.cache in their home) are theirs too.
  const chain: string[] = []
  for (let d = parent; !fs.existsSync(d); d = path.dirname(d)) chain.push(d)
  fs.mkdirSync(parent, { recursive: true, mode: 0o700 })
  for (const d of chain) fs.chownSync(d, owner.uid, owner.gid)
  if (fs.existsSync(dir)) throw Object.assign(new Error(`${dir} exists`), { code: 'EEXIST' })
  const staging = fs.mkdtempSync(`${dir}.new-`)
  try {
    fs.chmodSync(staging, 0o700)
    fs.chownSync(staging, owner.uid, owner.gid)
    // rename(2) fails with ENOTEMPTY/EEXIST when another made it meanwhile (and used it), and
    // replaces it only while it is still empty: either way `dir` ends up theirs.
    fs.renameSync(staging, dir)
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true })
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOTEMPTY' || code === 'EEXIST') throw Object.assign(new Error(`${dir} exists`), { code: 'EEXIST' })
    throw error
  }
}

const cachedParents = new Map<string, string>()

/**
 * The private parent of this user (created on first use, canonical). Throws an Error naming every
 * candidate and why it was refused when none is fit.
 */
export function privateParent(env: NodeJS.ProcessEnv = process.env, owner?: PrivateOwner): string {
  const candidates = privateParentCandidates(env, owner)
  const key = `${owner?.uid ?? ''}\0${candidates.join('\0')}`
  const cached = cachedParents.get(key)
  if (cached !== undefined && unfitness(cached, owner?.uid ?? selfUid()) === undefined) return cached
  const refused: string[] = []
  for (const dir of candidates) {
    const why = makePrivate(dir, owner)
    if (why === undefined) {
      const real = fs.realpathSync(dir)
      cachedParents.set(key, real)
      return real
    }
    refused.push(`${dir} ${why}`)
  }
  throw new Error(`cordon has no private directory: ${refused.join('; ')}`)
}

/** `<parent>/<name>` (mode 0700, created on first use); throws when it is unfit (a symlink, not ours). */
export function privateSubdir(
  name: 'sessions' | 'spill' | 'cache' | 'cli-spill' | 'config-records',
  env: NodeJS.ProcessEnv = process.env,
  owner?: PrivateOwner,
): string {
  const dir = path.join(privateParent(env, owner), name)
  const why = makePrivate(dir, owner)
  if (why !== undefined) throw new Error(`cordon's private directory ${dir} ${why}`)
  return dir
}

/** One sandbox session's directories. */
export interface SessionDirs {
  /** The session's own directory (`m/` and `spill/` inside). */
  dir: string
  /**
   * What holds `tmp` and `shm`: the one size-bounded tmpfs of both where the host mounts one
   * (src/subprocess/private-dirs/temp-mount.ts), so a run fills neither past it; a command never
   * writes here itself (`tmp` and `shm` cannot be swapped for links the host would then bind).
   */
  mem: string
  /** Its commands' TMPDIR. */
  tmp: string
  /** Its runs' spill files. */
  spill: string
  /** Its commands' /dev/shm under bubblewrap (POSIX semaphores and shared memory). */
  shm: string
  /**
   * Its commands' per-user runtime dir (XDG_RUNTIME_DIR; tmux's and screen's sockets), mode 0700,
   * inside `tmp` (the only place they may write in every mode). Made before any command runs: a
   * command may remove it, and the host never makes anything again in a tree a command can change.
   */
  runtime: string
  /** The size of the tmpfs that `mem` is; absent: a directory of the host's disk. */
  tempBytes?: number | undefined
}

/**
 * Creates a new session's directories under `<parent>/sessions` (label: a hint in the name); with
 * `tempBytes`, `mem` (`m/`: TMPDIR and /dev/shm) is a tmpfs of that size where the host can mount one.
 */
export function createSessionDirs(
  label: string,
  env: NodeJS.ProcessEnv = process.env,
  owner?: PrivateOwner,
  tempBytes?: number,
): SessionDirs {
  // A short hint: a unix socket path (tmux's, in m/t/.run) must fit in 108 bytes.
  const safe = label.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 16) || 'anon'
  const dir = fs.mkdtempSync(path.join(privateSubdir('sessions', env, owner), `${process.pid}-${safe}-`))
  fs.chmodSync(dir, 0o700)
  const mem = path.join(dir, 'm')
  const tmp = path.join(mem, 't')
  const spill = path.join(dir, 'spill')
  const shm = path.join(mem, 'shm')
  const runtime = path.join(tmp, '.run')
  for (const d of [mem, spill]) fs.mkdirSync(d, { mode: 0o700 })
  // Before anything is in it: tmp, shm and the runtime dir are made on the tmpfs.
  const mounted = tempBytes !== undefined && mountTemp(mem, tempBytes, isOther(owner) ? owner : undefined)
  for (const d of [tmp, shm, runtime]) fs.mkdirSync(d, { mode: 0o700 })
  if (isOther(owner)) for (const d of [dir, mem, tmp, spill, shm, runtime]) fs.chownSync(d, owner.uid, owner.gid)
  return { dir, mem, tmp, spill, shm, runtime, ...(mounted ? { tempBytes } : {}) }
}

/** `<pid>-<label>-XXXXXX`: a session dir's name. */
const SESSION_NAME = /^([1-9][0-9]{0,9})-[A-Za-z0-9_.-]*-[A-Za-z0-9]{6}$/

/**
 * Removes the entries of `base` whose name (matched by `pattern`, first group the owner's pid)
 * belongs to a host that is provably gone; returns the removed paths. Never this process's, never
 * through a symlink, only real directories owned by our uid.
 */
export function sweepDeadHosts(base: string, pattern: RegExp): string[] {
  const removed: string[] = []
  let entries: fs.Dirent[]
  try {
    entries = fs.readdirSync(base, { withFileTypes: true })
  } catch {
    return removed
  }
  for (const entry of entries) {
    const full = deadHostDir(base, entry.name, pattern)
    if (full === undefined) continue
    try {
      detachTemp(path.join(full, 'm')) // a SIGKILLed root host left its session's tmpfs mounted
      removeTreeSync(full) // by directory fd: never follows a link, even one swapped in meanwhile
      if (!fs.existsSync(full)) removed.push(full)
    } catch {
      // Raced with another sweeper or not ours to remove: left for the next one.
    }
  }
  return removed
}

/** `base/name` when `name` names another host's dir (a real directory of our uid) and that host is gone. */
function deadHostDir(base: string, name: string, pattern: RegExp): string | undefined {
  const match = pattern.exec(name)
  if (match === null) return undefined
  const pid = Number(match[1])
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined
  const full = path.join(base, name)
  let st: fs.Stats
  try {
    st = fs.lstatSync(full)
  } catch {
    return undefined
  }
  const uid = process.getuid?.()
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) return undefined
  return isProcessAlive(pid) ? undefined : full
}

/** Removes the session dirs of hosts that are gone (a SIGKILLed host leaves its own behind). */
export function sweepStaleSessions(env: NodeJS.ProcessEnv = process.env): string[] {
  return sweepDeadHosts(privateSubdir('sessions', env), SESSION_NAME)
}

/**
 * True unless `pid` is provably gone: `kill(pid, 0)` reports ESRCH and, where /proc exists,
 * `/proc/<pid>` is absent. Any doubt counts as alive.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') return true // EPERM: exists, not ours
  }
  if (fs.existsSync('/proc/self')) return fs.existsSync(`/proc/${pid}`)
  return false
}

/** `<parent>/empty`: an empty read-only file of ours (laid over hidden files); recreated when it is not that. */
export function privateEmptyFile(env: NodeJS.ProcessEnv = process.env, owner?: PrivateOwner): string {
  const file = path.join(privateParent(env, owner), 'empty')
  const st = (() => {
    try {
      return fs.lstatSync(file)
    } catch {
      return undefined
    }
  })()
  const uid = owner?.uid ?? selfUid()
  if (st?.isFile() && st.size === 0 && (uid === undefined || st.uid === uid) && (st.mode & 0o222) === 0) return file
  if (st !== undefined) fs.rmSync(file, { recursive: true, force: true })
  fs.writeFileSync(file, '', { mode: 0o444, flag: 'wx' })
  if (isOther(owner)) fs.chownSync(file, owner.uid, owner.gid)
  return file
}

/** Removes the regular files of `dir` last modified more than `maxAgeMs` ago; returns how many. Never follows a symlink. */
export function sweepOldFiles(dir: string, maxAgeMs: number, now = Date.now()): number {
  let removed = 0
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return 0
  }
  for (const name of names) {
    const p = path.join(dir, name)
    try {
      const st = fs.lstatSync(p)
      if (st.isFile() && now - st.mtimeMs > maxAgeMs) {
        fs.rmSync(p, { force: true })
        removed++
      }
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed
}
