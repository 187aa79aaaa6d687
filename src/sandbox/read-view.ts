/**
 * What a Landlock-confined command may read. Landlock is allow-list only and its rules cover a
 * whole subtree, so nothing can be closed under a rule on `/`: instead `/` gets only the right to
 * list directories (names stay listable everywhere), and read rights go on every sibling along
 * the path to each closed place — every entry of `/` but `dev`, every entry of `/dev` but what is
 * closed, and so on for each hidden path. A closed path's content can then not be opened.
 *
 * Symlinks among the siblings get no rule (a rule would land on their target, which may be the
 * very place that is closed); what they point to is covered where it really lives. Entries that
 * appear later beside an ancestor are not readable until the view is rebuilt: each ancestor is
 * watched (inotify through fs.watch), and any change there makes a new epoch, so the next plan
 * lists again — no listing per spawn. Where a watch cannot be set, every plan lists again.
 */
import fs from 'node:fs'
import { FS, READ_TREE, type RulesetEntry } from './landlock.js'

/** One epoch of a view: the read entries, and the epoch they belong to. */
export interface ReadViewSnapshot {
  epoch: number
  entries: RulesetEntry[]
}

/** Whether `inner` is `outer` or lies beneath it (both canonical). */
function within(inner: string, outer: string): boolean {
  return inner === outer || outer === '/' || inner.startsWith(`${outer}/`)
}

/**
 * The read entries for a set of closed paths (canonical, absolute): `/` listable, every sibling
 * along the way readable, the closed paths themselves and symlinks left out. `watch` is called
 * with every directory that was listed.
 */
export function readEntries(closed: readonly string[], watch?: (dir: string) => void): RulesetEntry[] {
  const entries: RulesetEntry[] = [{ path: '/', rights: FS.READ_DIR, origin: 'read' }]
  const shut = [...new Set(closed)].filter((p) => p !== '/')
  const visit = (dir: string) => {
    watch?.(dir)
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      return // unreadable or gone: nothing below it is granted
    }
    for (const name of names) {
      const p = dir === '/' ? `/${name}` : `${dir}/${name}`
      if (shut.includes(p)) continue
      let st: fs.Stats
      try {
        st = fs.lstatSync(p)
      } catch {
        continue
      }
      if (st.isSymbolicLink()) continue
      if (shut.some((c) => within(c, p))) {
        if (st.isDirectory()) visit(p)
        continue
      }
      entries.push({ path: p, rights: st.isDirectory() ? READ_TREE : FS.READ_FILE | FS.EXECUTE, origin: 'read' })
    }
  }
  visit('/')
  return entries
}

/** A read view kept current by watching the directories it listed. */
export class ReadView {
  private snapshot: ReadViewSnapshot | undefined
  private epoch = 0
  private watchers: fs.FSWatcher[] = []
  private unwatched = false

  constructor(private readonly closed: readonly string[]) {}

  /** The entries of the current epoch (listing again only after a watched directory changed). */
  current(): ReadViewSnapshot {
    if (this.snapshot && !this.unwatched) return this.snapshot
    this.stopWatching()
    this.unwatched = false
    const epoch = ++this.epoch
    const entries = readEntries(this.closed, (dir) => this.watch(dir))
    this.snapshot = { epoch, entries }
    return this.snapshot
  }

  private watch(dir: string): void {
    try {
      const watcher = fs.watch(dir, { persistent: false }, () => this.invalidate())
      watcher.on('error', () => this.invalidate())
      this.watchers.push(watcher)
    } catch {
      this.unwatched = true // no inotify here (or its limit is reached): list on every plan
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
