/**
 * What a confined command may read, for a set of hidden places, in the two forms the backends
 * need: Landlock read rules, and the mounts bubblewrap lays over the hidden places.
 *
 * Landlock is allow-list only and its rules cover a whole subtree, so nothing can be hidden under
 * a rule on `/`: instead `/` gets only the right to list directories (names stay listable
 * everywhere), and read rights go on every sibling along the path to each hidden place — every
 * entry of `/` but `dev`, every entry of `/dev` but what is closed, and so on. A directory with
 * `only`/`keep` globs is listed too, its hidden children left out. Hidden content can then not be
 * opened. Symlinks among the siblings get no rule (a rule would land on their target, which may
 * be the very place that is hidden); what they point to is covered where it really lives.
 *
 * bubblewrap: an empty tmpfs over each hidden directory (made read-only once the deeper mounts
 * are in place), an empty read-only file over each hidden file; for `keep`, the kept children
 * bound back read-only. A hidden path that does not exist gets nothing (no mount point is made).
 *
 * Entries that appear later beside a listed directory are not readable until the view is
 * rebuilt: each listed directory, and the parent of each hidden place, is watched (inotify
 * through fs.watch, names only), and a new, removed or renamed entry makes a new epoch, so the
 * next plan lists again — no listing per spawn. The first listing is not watched (a one-shot
 * sandbox never plans twice): the second plan lists again and watches from then. Where a watch
 * cannot be set, every plan lists.
 */
import fs from 'node:fs'
import path from 'node:path'
import { globMatches, type HiddenPlace } from '../../policy/profiles/hidden-defaults.js'
import { canonicalPath } from '../../policy/resolve.js'
import { FS, READ_TREE, type RulesetEntry } from '../ruleset/landlock.js'

/** One hidden place as the view takes it; `landlockOnly` places get no bubblewrap mount (bwrap makes its own /dev). */
export interface ViewPlace extends HiddenPlace {
  readonly landlockOnly?: boolean
}

/** `/dev` is closed to every Landlock-confined command but the granted devices (bubblewrap makes its own /dev). */
export const DEV_CLOSED: ViewPlace = { name: 'devices', path: '/dev', landlockOnly: true }

/** A bubblewrap mount over a hidden place (or a kept child bound back, or a symlink recreated). */
export interface HiddenMount {
  /**
   * `dir`: an empty tmpfs, read-only once filled; `file`: an empty read-only file; `keep`: the
   * host path bound back (read-only); `symlink`: a symlink made anew in a tmpfs (`target`).
   */
  kind: 'dir' | 'file' | 'keep' | 'symlink'
  path: string
  target?: string
  writable?: boolean
  /** `dir`: the permission bits the tmpfs gets (the host dir's). */
  mode?: number
}

/** One epoch of a view. */
export interface ReadViewSnapshot {
  epoch: number
  /** Landlock read rules. */
  entries: RulesetEntry[]
  /** bubblewrap's mounts, parents before children. */
  mounts: HiddenMount[]
  /** Every hidden place that exists, canonical (for explain). */
  hidden: string[]
  /** Every hidden place, canonical, whether it exists or not (bubblewrap's; for the accounts). */
  places: string[]
}

/** Whether `inner` is `outer` or lies beneath it (both canonical). */
export function within(inner: string, outer: string): boolean {
  return inner === outer || outer === '/' || inner.startsWith(`${outer}/`)
}

interface Filter {
  only?: readonly string[] | undefined
  keep?: readonly string[] | undefined
}

const matchesAny = (globs: readonly string[] | undefined, name: string) =>
  globs?.some((g) => globMatches(g, name)) === true

function lstat(p: string): fs.Stats | undefined {
  try {
    // No exception for a missing path: most of the default hidden set does not exist.
    return fs.lstatSync(p, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

function list(dir: string): string[] | undefined {
  try {
    return fs.readdirSync(dir)
  } catch {
    return undefined
  }
}

/** The hidden places made canonical: fully closed paths and filtered directories. */
function canonicalPlaces(places: readonly ViewPlace[]) {
  const closed = new Map<string, ViewPlace>()
  const filters = new Map<string, Filter>()
  for (const place of places) {
    const p = canonicalPath(place.path)
    if (p === '/') continue
    if (place.only === undefined && place.keep === undefined) closed.set(p, place)
    else {
      const f = filters.get(p) ?? {}
      filters.set(p, {
        only: place.only ? [...(f.only ?? []), ...place.only] : f.only,
        keep: place.keep ? [...(f.keep ?? []), ...place.keep] : f.keep,
      })
    }
  }
  // A place inside a fully closed one is hidden by it already.
  const shut = [...closed.keys()]
  const inside = (p: string) => shut.some((c) => c !== p && within(p, c))
  for (const p of [...closed.keys()]) if (inside(p)) closed.delete(p)
  for (const p of [...filters.keys()]) if (inside(p) || closed.has(p)) filters.delete(p)
  return { closed, filters }
}

/**
 * The read entries and mounts for `places`: `/` listable, every sibling along the way readable,
 * hidden places and symlinks left out. `watch` is called with every directory whose listing
 * the result depends on.
 */
export function readEntries(
  places: readonly ViewPlace[],
  watch?: (dir: string) => void,
  options: { writable?: readonly string[] } = {},
): Omit<ReadViewSnapshot, 'epoch'> {
  const { closed, filters } = canonicalPlaces(places)
  // Every target and each of its ancestors: the directories the walk descends into.
  const onTheWay = new Set<string>()
  for (const t of [...closed.keys(), ...filters.keys()]) for (let d = t; d !== '/'; d = path.dirname(d)) onTheWay.add(d)
  const entries: RulesetEntry[] = [{ path: '/', rights: FS.READ_DIR, origin: 'read' }]
  for (const place of places) {
    // A place replaced by a symlink (or created) changes what is hidden: its parent is watched.
    const parent = path.dirname(place.path)
    if (lstat(parent)?.isDirectory()) watch?.(parent)
  }
  const visit = (dir: string) => {
    watch?.(dir)
    const names = list(dir)
    if (names === undefined) return // unreadable or gone: nothing below it is granted
    const filter = filters.get(dir)
    for (const name of names) {
      const p = dir === '/' ? `/${name}` : `${dir}/${name}`
      if (closed.has(p)) continue
      if (filter && (matchesAny(filter.only, name) || (filter.keep !== undefined && !matchesAny(filter.keep, name))))
        continue
      const st = lstat(p)
      if (st === undefined || st.isSymbolicLink()) continue
      const directory = st.isDirectory()
      if (onTheWay.has(p)) {
        if (directory) visit(p)
        continue
      }
      entries.push({
        path: p,
        rights: directory ? READ_TREE : FS.READ_FILE | FS.EXECUTE,
        origin: 'read',
        seen: { dev: st.dev, ino: st.ino, directory },
      })
    }
  }
  visit('/')

  const bwrapClosed = [...closed.entries()].filter(([, place]) => place.landlockOnly !== true).map(([p]) => p)
  // The mounts and the list of what exists are bubblewrap's and explain's: a Landlock plan never
  // asks, so they are worked out (listing the hidden places' parents) on first use only.
  let masks: { mounts: HiddenMount[]; hidden: string[] } | undefined
  const masked = () => {
    masks ??= maskedPlaces(bwrapClosed, filters, options.writable ?? [])
    return masks
  }
  return {
    entries,
    places: [...bwrapClosed, ...filters.keys()].sort(),
    get mounts() {
      return masked().mounts
    },
    get hidden() {
      return masked().hidden
    },
  }
}

/** bubblewrap's mounts over the hidden places, and which of them exist. */
function maskedPlaces(
  bwrapClosed: readonly string[],
  filters: ReadonlyMap<string, Filter>,
  writable: readonly string[],
): { mounts: HiddenMount[]; hidden: string[] } {
  // bubblewrap: a mount laid over a file is detached when the host renames another file over
  // it (editors, passwd and git-credential-store write that way), and a place the host creates
  // during the run is not masked at all. So what holds a hidden path is a "shell" over its parent:
  // an empty tmpfs with every other child bound back (symlinks recreated), so nothing the host
  // does in that directory later shows inside. Inside a writable root a shell would swallow the
  // command's own new files: there the hidden path itself is masked (and its parents anchored).
  const mounts: HiddenMount[] = []
  const hidden: string[] = []
  const hiddenSet = new Set<string>()
  const shells = new Map<string, Set<string> | undefined>() // dir -> the only children kept (keep), or all but hidden
  const writableish = (p: string) => writable.some((w) => within(p, w) || within(w, p))
  const insideWritable = (p: string) => writable.some((w) => within(p, w))
  const hideIn = (p: string, st: fs.Stats) => {
    hidden.push(p)
    hiddenSet.add(p)
    const parent = path.dirname(p)
    if (insideWritable(p) || parent === '/') mounts.push({ kind: st.isDirectory() ? 'dir' : 'file', path: p })
    else if (!shells.has(parent)) shells.set(parent, undefined)
  }
  for (const p of bwrapClosed) {
    const st = lstat(p)
    if (st !== undefined) hideIn(p, st)
  }
  for (const [dir, filter] of filters) {
    const st = lstat(dir)
    if (!st?.isDirectory()) continue
    const names = list(dir) ?? []
    if (filter.keep !== undefined) {
      const kept = new Set(names.filter((name) => !matchesAny(filter.only, name) && matchesAny(filter.keep, name)))
      if (insideWritable(dir)) {
        hidden.push(dir)
        mounts.push({ kind: 'dir', path: dir })
        for (const name of kept) mounts.push({ kind: 'keep', path: path.join(dir, name) })
      } else {
        hidden.push(dir)
        shells.set(dir, kept)
        if (path.dirname(dir) !== '/' && !shells.has(path.dirname(dir))) shells.set(path.dirname(dir), undefined)
      }
      continue
    }
    for (const name of names) {
      if (!matchesAny(filter.only, name)) continue
      const child = lstat(path.join(dir, name))
      if (child) hideIn(path.join(dir, name), child)
    }
  }
  for (const [dir, only] of shells) {
    const shell = lstat(dir)
    if (!shell?.isDirectory()) continue
    mounts.push({ kind: 'dir', path: dir, mode: shell.mode & 0o7777 })
    for (const name of list(dir) ?? []) {
      const child = path.join(dir, name)
      if (only !== undefined ? !only.has(name) : hiddenSet.has(child)) continue
      if (shells.has(child)) continue // a shell of its own
      const st = lstat(child)
      if (st === undefined) continue
      // A writable grant at or below a child is bound by its own mount (deeper, or this one).
      if (writable.includes(child)) continue
      if (st.isSymbolicLink()) {
        try {
          mounts.push({ kind: 'symlink', path: child, target: fs.readlinkSync(child) })
        } catch {
          // gone since the listing
        }
      } else mounts.push({ kind: 'keep', path: child, writable: writableish(child) && insideWritable(child) })
    }
  }
  mounts.sort((a, b) => depth(a.path) - depth(b.path))
  return { mounts, hidden: hidden.sort() }
}

function mtimeOf(dir: string): bigint | undefined {
  try {
    return fs.statSync(dir, { bigint: true }).mtimeNs
  } catch {
    return undefined
  }
}

/** The number of components of a canonical path (parents sort before children). */
export function depth(p: string): number {
  return p === '/' ? 0 : p.split('/').length - 1
}

/** A read view kept current by watching the directories it listed. */
export class ReadView {
  private snapshot: ReadViewSnapshot | undefined
  private epoch = 0
  private watchers: fs.FSWatcher[] = []
  /** Whether watches cover the current snapshot (false: the next call lists again). */
  private watching = false
  /** Each watched directory's mtime when it was listed. */
  private stamps: Array<{ dir: string; mtime: bigint | undefined }> = []

  /** `writable`: the policy's writable grants (inside them bubblewrap masks a hidden path itself, never its parent). */
  constructor(
    private readonly places: readonly ViewPlace[],
    private readonly writable: readonly string[] = [],
  ) {}

  /** The canonical paths of the places hidden whole (no `only`/`keep` globs), existing or not; /dev left out. */
  exactPlaces(): string[] {
    return this.places
      .filter((p) => p.landlockOnly !== true && p.only === undefined && p.keep === undefined)
      .map((p) => canonicalPath(p.path))
  }

  /** How many hidden places the view hides (those bubblewrap also hides: /dev is Landlock's own). */
  get placeCount(): number {
    return this.places.filter((p) => p.landlockOnly !== true).length
  }

  /**
   * The view of the current epoch (listing again only after a watched directory's names changed).
   * `verify` also checks the listed directories' mtimes now, for a change whose watch event has
   * not arrived yet.
   */
  current(verify = false): ReadViewSnapshot {
    if (this.snapshot && this.watching && (!verify || this.unchanged())) return this.snapshot
    this.stopWatching()
    // The first listing sets no watch: a one-shot sandbox (`cordon run`) never asks again, and
    // watches cost more than the listing. Asked again, the view lists anew and watches from then.
    const watch = this.epoch > 0
    this.watching = watch
    const epoch = ++this.epoch
    const watched = new Set<string>()
    this.stamps = []
    const view = readEntries(
      this.places,
      (dir) => {
        if (watched.has(dir)) return
        watched.add(dir)
        this.stamps.push({ dir, mtime: mtimeOf(dir) })
        if (watch) this.watch(dir)
      },
      { writable: this.writable },
    )
    // Not a spread: that would work out the lazy mounts now.
    this.snapshot = Object.assign(view, { epoch })
    return this.snapshot
  }

  /**
   * Whether no watched directory's names changed since the current epoch was listed, checked now
   * by their mtimes rather than by the watch (whose events arrive a tick later): a mount can only
   * hide what exists when bubblewrap starts, so its plans check this per spawn.
   */
  unchanged(): boolean {
    return this.snapshot !== undefined && this.stamps.every((s) => mtimeOf(s.dir) === s.mtime)
  }

  private watch(dir: string): void {
    try {
      // 'rename' is a name appearing, going or moving; 'change' (content, attributes) leaves names alone.
      const watcher = fs.watch(dir, { persistent: false }, (event) => {
        if (event === 'rename') this.invalidate()
      })
      watcher.on('error', () => this.invalidate())
      this.watchers.push(watcher)
    } catch {
      this.watching = false // no inotify here (or its limit is reached): list on every plan
    }
  }

  private invalidate(): void {
    this.snapshot = undefined
  }

  private stopWatching(): void {
    for (const w of this.watchers) w.close()
    this.watchers = []
  }

  /** Stops watching. */
  close(): void {
    this.stopWatching()
    this.snapshot = undefined
  }
}
