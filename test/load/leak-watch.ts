/**
 * What a load run may leave in its host, read from the host's own /proc and disk: descriptors,
 * descendant processes (zombies among them), processes carrying a run's marker, this host's
 * session and spill dirs, its runs' cgroup leaves, and its resident set after a full GC.
 * test/load/leak-watch.test.ts shows each reader sees a deliberate leak.
 */
import fs from 'node:fs'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { cgroupHierarchies } from '../../src/subprocess/cgroup/hierarchy.js'
import { privateSubdir } from '../../src/subprocess/private-dirs/layout.js'

/** This process's descriptors: fd number -> what it points at (`/proc/self/fd`'s links). */
export function hostFds(): Map<number, string> {
  const fds = new Map<number, string>()
  for (const name of fs.readdirSync('/proc/self/fd')) {
    try {
      fds.set(Number(name), fs.readlinkSync(`/proc/self/fd/${name}`))
    } catch {
      // the listing's own fd, closed by the time it is read
    }
  }
  return fds
}

/** A run's cgroup leaf (`…/cordon-<pid>/<n>/…`) with its number taken out: the spare leaf is one whatever its number. */
const leafNumber = new RegExp(`/cordon-${process.pid}/\\d+/`)

/** What each descriptor points at, a cgroup leaf's number left out (fd numbers may be reused in any order). */
function fdTargets(fds: Map<number, string>): string[] {
  return [...fds.values()].map((target) => target.replace(leafNumber, `/cordon-${process.pid}/N/`))
}

/** The items of `a` that `b` does not hold, counted with their multiplicity. */
function without(a: readonly string[], b: readonly string[]): string[] {
  const left = new Map<string, number>()
  for (const x of b) left.set(x, (left.get(x) ?? 0) + 1)
  return a.filter((x) => {
    const n = left.get(x) ?? 0
    left.set(x, n - 1)
    return n <= 0
  })
}

/** What the descriptors of `now` point at that those of `before` did not, and the other way round. */
export function fdChanges(before: Map<number, string>, now: Map<number, string>): { added: string[]; gone: string[] } {
  const a = fdTargets(before)
  const b = fdTargets(now)
  return { added: without(b, a).sort(), gone: without(a, b).sort() }
}

/** One process as /proc shows it. */
export interface ProcEntry {
  pid: number
  ppid: number
  /** One letter: R, S, D, Z, … */
  state: string
  /** Its argv, spaces between. */
  cmdline: string
}

function readEntry(pid: number): ProcEntry | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
    const tail = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    let cmdline = ''
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim()
    } catch {}
    return { pid, ppid: Number(tail[1]), state: tail[0] ?? '?', cmdline }
  } catch {
    return undefined
  }
}

/** Every process below `root` (default: this one), zombies included. */
export function descendants(root = process.pid): ProcEntry[] {
  const all = fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => readEntry(Number(n)))
    .filter((e): e is ProcEntry => e !== undefined)
  const children = new Map<number, ProcEntry[]>()
  for (const e of all) children.set(e.ppid, [...(children.get(e.ppid) ?? []), e])
  const out: ProcEntry[] = []
  const queue = [root]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child)
      queue.push(child.pid)
    }
  }
  return out
}

/**
 * The processes below this one that `baseline` (pids) did not hold, but a launcher's idle
 * supervisor: the one child, forked ahead, of a `cordon-exec zygote` of the baseline (a launcher
 * stays for its host thread and forks a new idle supervisor per run). A launcher's second child
 * counts: it is a run's supervisor still there.
 */
export function newProcesses(baseline: ReadonlySet<number>): ProcEntry[] {
  const now = descendants()
  const children = new Map<number, number>()
  for (const p of now) children.set(p.ppid, (children.get(p.ppid) ?? 0) + 1)
  const launchers = new Set(
    now.filter((p) => baseline.has(p.pid) && p.cmdline.startsWith('cordon-exec zygote ')).map((p) => p.pid),
  )
  return now.filter((p) => !baseline.has(p.pid) && !(launchers.has(p.ppid) && children.get(p.ppid) === 1))
}

/** The zombies below this process (an unreaped child, or an unreaped grandchild of a launcher). */
export function zombies(): ProcEntry[] {
  return descendants().filter((e) => e.state === 'Z')
}

/** Live processes anywhere on the host whose environment holds `marker` (`NAME=value`): a run's survivors. */
export function markedProcesses(marker: string): ProcEntry[] {
  const needle = Buffer.from(`${marker}\0`)
  const found: ProcEntry[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (!fs.readFileSync(`/proc/${name}/environ`).includes(needle)) continue
    } catch {
      continue // gone, or a zombie (no environment left)
    }
    const entry = readEntry(Number(name))
    if (entry !== undefined && entry.state !== 'Z' && entry.state !== 'X') found.push(entry)
  }
  return found
}

/** This host's sandbox session dirs and runtime spill dirs (under cordon's private parent) that exist now. */
export function ownPrivateDirs(): string[] {
  const ofThisHost = (dir: string, prefix: string) =>
    fs
      .readdirSync(dir)
      .filter((n) => n.startsWith(prefix))
      .map((n) => path.join(dir, n))
  return [
    ...ofThisHost(privateSubdir('sessions'), `${process.pid}-`),
    ...ofThisHost(privateSubdir('spill'), `cordon-spill-${process.pid}-`),
  ]
}

/** This host's run cgroup leaves (`<controller>/…/cordon-<pid>/<n>`) that exist now. */
export function ownCgroupLeaves(): string[] {
  return Object.values(cgroupHierarchies().dirs).flatMap((own) => {
    const parent = path.join(own, `cordon-${process.pid}`)
    try {
      return fs
        .readdirSync(parent, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(parent, e.name))
    } catch {
      return []
    }
  })
}

/** What the host holds with no load open: its descriptors and the processes below it. */
export interface Baseline {
  fds: Map<number, string>
  pids: Set<number>
}

/** The host's descriptors and descendants now. */
export function hostBaseline(): Baseline {
  return { fds: hostFds(), pids: new Set(descendants().map((p) => p.pid)) }
}

/**
 * What load left in the host against `baseline`, one line each (empty: nothing): processes
 * carrying `marker`, zombies, new processes, descriptors opened or closed, this host's session
 * and spill dirs, the `spills` that still exist, and cgroup leaves beyond the one per controller
 * made ahead for a next run.
 */
export function leftovers(baseline: Baseline, marker: string, spills: readonly string[] = []): string[] {
  const { added, gone } = fdChanges(baseline.fds, hostFds())
  // One leaf per controller is made ahead for a next run; a second one in a controller is left behind.
  const leaves = ownCgroupLeaves()
  const extra = leaves.filter((leaf) => leaves.filter((l) => path.dirname(l) === path.dirname(leaf)).length > 1)
  return [
    ...markedProcesses(marker).map((p) => `survivor ${p.pid} ${p.state} ${p.cmdline}`),
    ...zombies().map((p) => `zombie ${p.pid} (parent ${p.ppid}) ${p.cmdline}`),
    ...newProcesses(baseline.pids).map((p) => `process ${p.pid} ${p.state} (parent ${p.ppid}) ${p.cmdline}`),
    ...added.map((l) => `fd opened: ${l}`),
    ...gone.map((l) => `fd closed: ${l}`),
    ...ownPrivateDirs().map((d) => `private dir ${d}`),
    ...spills.filter((f) => fs.existsSync(f)).map((f) => `spill file ${f}`),
    ...extra.map((l) => `cgroup leaf ${l}`),
  ]
}

let gc: (() => void) | undefined

/**
 * This process's resident set (bytes) after full collections: the least of three reads, so a
 * transient buffer of the moment does not count. `--expose-gc` is turned on from inside, as no
 * vitest worker is started with it.
 */
export function settledRss(): number {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  let least = Number.POSITIVE_INFINITY
  for (let i = 0; i < 3; i++) {
    gc()
    least = Math.min(least, process.memoryUsage().rss)
  }
  return least
}
