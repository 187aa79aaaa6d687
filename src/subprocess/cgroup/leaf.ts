/**
 * One run's cgroups: a leaf per bound controller under the host's own cgroup
 * (`cordon-<hostpid>/<n>`), its limit written before anything joins it, its `cgroup.procs` opened
 * write-only (close-on-exec) for the run's confined command to join before exec
 * (native/confine.cc:apply_confinement), removed once the tree is gone. A leaf still busy then is
 * tried again, and one that never empties is listed by {@link stuckCgroups}.
 */
import fs from 'node:fs'
import path from 'node:path'
import { SpawnError } from '../../policy/errors.js'
import { isProcessAlive } from '../private-dirs/layout.js'
import { type BoundController, cgroupHierarchies, readNumber } from './hierarchy.js'

/** The bounds one run asks for (absent: that controller is not used). */
export interface RunBounds {
  /** Most processes and threads of the tree (pids.max). */
  pids?: number | undefined
  /** Most memory of the tree, page cache and swap included (memory.limit_in_bytes, memsw). */
  memoryBytes?: number | undefined
  /** The tree shares the CPU as one group (cpu.shares: 1024, one task's weight). */
  cpuGroup?: boolean | undefined
}

/**
 * What bounds a confined run's tree as a whole: its cgroups, which its command joins before exec,
 * and `oomScoreAdj`, raised in a launched run's supervisor (bwrap's clone child under bubblewrap).
 */
export interface SubprocessBounds extends RunBounds {
  oomScoreAdj?: number | undefined
}

/** What a run's leaves saw once its tree was gone. */
export interface BoundFacts {
  /** A fork was refused at pids.max. */
  pidsHit: boolean
  /** The memory limit was reached (memory.failcnt) */
  memoryHit: boolean
}

const stuck = new Set<string>()
/** Leaves made ahead for the next run with the same bounds. */
let spare: { key: string; cgroup: RunCgroup } | undefined
let made = 0
const parents = new Set<string>()
const swept = new Set<string>()

/** Leaves that were still busy long after their tree was gone (for the host to report). */
export function stuckCgroups(): readonly string[] {
  return [...stuck]
}

/** The controllers `bounds` uses, in the order their fds travel (pids, memory, cpu). */
export function controllersOf(bounds: RunBounds | undefined): BoundController[] {
  const out: BoundController[] = []
  if (bounds?.pids !== undefined) out.push('pids')
  if (bounds?.memoryBytes !== undefined) out.push('memory')
  if (bounds?.cpuGroup === true) out.push('cpu')
  return out
}

/** Removes the empty leaves (and the dir) of hosts that are gone under `dir`. */
function sweepDeadHosts(dir: string): void {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    const match = /^cordon-([1-9][0-9]*)$/.exec(name)
    if (!match || Number(match[1]) === process.pid || isProcessAlive(Number(match[1]))) continue
    removeLeafTree(path.join(dir, name))
  }
}

/** rmdir of every leaf of `parent`, then of `parent` (a busy one stays). */
function removeLeafTree(parent: string): void {
  try {
    for (const leaf of fs.readdirSync(parent, { withFileTypes: true }))
      if (leaf.isDirectory()) tryRmdir(path.join(parent, leaf.name))
    fs.rmdirSync(parent)
  } catch {}
}

function tryRmdir(dir: string): boolean {
  try {
    fs.rmdirSync(dir)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

/** `cordon-<pid>` under the host's own cgroup of `controller` (made, and stale ones swept, once per process). */
function parentDir(own: string): string {
  const parent = path.join(own, `cordon-${process.pid}`)
  if (!parents.has(parent)) {
    if (!swept.has(own)) sweepDeadHosts(own)
    swept.add(own)
    try {
      fs.mkdirSync(parent)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    parents.add(parent)
  }
  return parent
}

/** The limit files of `controller` a leaf gets, in the order they must be written. */
function limitsOf(controller: BoundController, bounds: RunBounds, memsw: boolean): Array<[string, number]> {
  if (controller === 'pids') return [['pids.max', bounds.pids as number]]
  if (controller === 'cpu') return []
  const bytes = bounds.memoryBytes as number
  return memsw
    ? [
        ['memory.limit_in_bytes', bytes],
        ['memory.memsw.limit_in_bytes', bytes],
      ]
    : [['memory.limit_in_bytes', bytes]]
}

/** One run's leaves and the fds its command joins them by. */
export class RunCgroup {
  private constructor(
    private readonly leaves: ReadonlyArray<{ controller: BoundController; dir: string }>,
    private open: number[],
  ) {}

  /** Makes the leaves `bounds` asks for; throws SpawnError at `cgroup` (nothing left behind) when one cannot be made. */
  static create(bounds: RunBounds): RunCgroup {
    const key = JSON.stringify(bounds)
    const ready = spare?.key === key ? spare.cgroup : undefined
    if (spare !== undefined && ready === undefined) spare.cgroup.remove()
    spare = undefined
    // The next run's leaves are made once this one started (off a spawn's critical path).
    setTimeout(() => {
      if (spare !== undefined) return
      try {
        spare = { key, cgroup: RunCgroup.make(bounds) }
      } catch {
        // the next run makes its own, and says why if it cannot
      }
    }, 0).unref()
    return ready ?? RunCgroup.make(bounds)
  }

  /** Makes the leaves `bounds` asks for (see {@link RunCgroup.create}). */
  private static make(bounds: RunBounds): RunCgroup {
    const { dirs, memsw } = cgroupHierarchies()
    const leaves: Array<{ controller: BoundController; dir: string }> = []
    const fds: number[] = []
    const n = ++made
    try {
      for (const controller of controllersOf(bounds)) {
        const own = dirs[controller]
        if (own === undefined) throw Object.assign(new Error(`no writable ${controller} hierarchy`), { code: 'ENOENT' })
        const dir = path.join(parentDir(own), String(n))
        fs.mkdirSync(dir)
        leaves.push({ controller, dir })
        for (const [file, value] of limitsOf(controller, bounds, memsw)) writeValue(path.join(dir, file), value)
        fds.push(fs.openSync(path.join(dir, 'cgroup.procs'), fs.constants.O_WRONLY))
      }
    } catch (error) {
      for (const fd of fds) fs.closeSync(fd)
      for (const leaf of leaves) tryRmdir(leaf.dir)
      const e = error as NodeJS.ErrnoException
      throw new SpawnError({
        stage: 'cgroup',
        errno: typeof e.errno === 'number' ? -e.errno : 2,
        detail: `the run's cgroup could not be made: ${e.message}`,
        cause: error,
      })
    }
    return new RunCgroup(leaves, fds)
  }

  /** The `cgroup.procs` fds, in controller order (pids, memory, cpu). */
  get fds(): readonly number[] {
    return this.open
  }

  /** Closes the host's fds (the run's supervisor holds its own copies by now). */
  closeFds(): void {
    for (const fd of this.open) fs.closeSync(fd)
    this.open = []
  }

  /** What the leaves counted: whether a fork or an allocation met its limit. */
  facts(): BoundFacts {
    const dirOf = (c: BoundController) => this.leaves.find((l) => l.controller === c)?.dir
    const pids = dirOf('pids')
    const memory = dirOf('memory')
    const events = pids ? safeRead(path.join(pids, 'pids.events')) : ''
    return {
      pidsHit: /^max [1-9]/m.test(events),
      memoryHit: memory !== undefined && (readNumber(path.join(memory, 'memory.failcnt')) ?? 0) > 0,
    }
  }

  /**
   * Removes the leaves once the tree is gone, off the event loop (an rmdir of a cgroup takes a
   * fraction of a millisecond); a busy one is tried again for a while, then listed as stuck.
   */
  remove(): void {
    this.closeFds()
    if (this.leaves.length > 0)
      retryRemoval(
        this.leaves.map((l) => l.dir),
        0,
        0,
      )
  }
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** Writes `value` into a cgroup file (no O_CREAT or O_TRUNC: a control file takes a plain write). */
function writeValue(file: string, value: number): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY)
  try {
    fs.writeSync(fd, String(value))
  } finally {
    fs.closeSync(fd)
  }
}

/** rmdir each of `dirs` after `delayMs`; again, later, for a busy one (a reaped tree's last tasks leave a moment after). */
function retryRemoval(dirs: string[], attempt: number, delayMs: number): void {
  setTimeout(() => {
    void Promise.all(
      dirs.map((d) =>
        fs.promises.rmdir(d).then(
          () => undefined,
          (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : d),
        ),
      ),
    ).then((results) => {
      const left = results.filter((d): d is string => d !== undefined)
      if (left.length === 0) return
      if (attempt >= 20) for (const d of left) stuck.add(d)
      else retryRemoval(left, attempt + 1, Math.min(10 * 2 ** attempt, 500))
    })
  }, delayMs).unref()
}

process.once('exit', () => {
  for (const parent of parents) removeLeafTree(parent)
})
