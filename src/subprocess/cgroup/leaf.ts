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
let made = 0
const parents = new Set<string>()

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

/** `cordon-<pid>` under the host's own cgroup of `controller` (made, and stale ones swept, once). */
function parentDir(own: string): string {
  const parent = path.join(own, `cordon-${process.pid}`)
  if (!parents.has(parent)) {
    sweepDeadHosts(own)
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
        for (const [file, value] of limitsOf(controller, bounds, memsw))
          fs.writeFileSync(path.join(dir, file), String(value))
        fs.writeFileSync(path.join(dir, 'notify_on_release'), '0')
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

  /** Removes the leaves once the tree is gone; a busy one is tried again for a while, then listed as stuck. */
  remove(): void {
    this.closeFds()
    const left = this.leaves.filter((l) => !tryRmdir(l.dir)).map((l) => l.dir)
    if (left.length > 0) retryRemoval(left, 0)
    else for (const l of this.leaves) releaseParent(path.dirname(l.dir))
  }
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** Removes a host's parent once its last leaf is gone (a host that dies unannounced leaves nothing then). */
function releaseParent(parent: string): void {
  if (tryRmdir(parent)) parents.delete(parent)
}

/** rmdir again after a delay: a reaped tree's last tasks leave the cgroup a moment later. */
function retryRemoval(dirs: string[], attempt: number): void {
  setTimeout(
    () => {
      const left = dirs.filter((d) => !tryRmdir(d))
      if (left.length === 0) {
        for (const d of dirs) releaseParent(path.dirname(d))
        return
      }
      if (attempt >= 20) for (const d of left) stuck.add(d)
      else retryRemoval(left, attempt + 1)
    },
    Math.min(10 * 2 ** attempt, 500),
  ).unref()
}

process.once('exit', () => {
  for (const parent of parents) removeLeafTree(parent)
})
