/**
 * The cgroup v1 hierarchies a root host bounds its runs with: for `pids`, `memory` and `cpu` (a
 * run's whole tree weighs as one task of the host's, so a busy tree cannot starve it), the host's
 * own cgroup directory in each (its path from /proc/self/cgroup under the controller's mount
 * from /proc/self/mountinfo), when the host is root and that mount is writable. cgroup v2 and
 * non-root hosts get none: their runs' process and memory bounds are then not governed.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** The controllers a run is bounded with. */
export const BOUND_CONTROLLERS = ['pids', 'memory', 'cpu'] as const

/** One of {@link BOUND_CONTROLLERS}. */
export type BoundController = (typeof BOUND_CONTROLLERS)[number]

/** Where the host may make its runs' cgroups. */
export interface CgroupHierarchies {
  /** The host's own cgroup dir in each writable v1 hierarchy. */
  dirs: Partial<Record<BoundController, string>>
  /** The memory controller counts swap too (memory.memsw.limit_in_bytes exists). */
  memsw: boolean
  /** The least memory limit on the host's own cgroup and its ancestors (bytes; undefined: none). */
  memoryLimit: number | undefined
}

/** `\040`-style escapes of /proc/self/mountinfo, undone. */
const unescapeMount = (s: string) =>
  s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(Number.parseInt(o, 8)))

/** The v1 mounts of each bound controller: mount point and the root of the hierarchy it shows. */
export function v1Mounts(mountinfo: string): Partial<Record<BoundController, { at: string; root: string }>> {
  const out: Partial<Record<BoundController, { at: string; root: string }>> = {}
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ')
    if (left === undefined || right === undefined) continue
    const fields = left.split(' ')
    const [fstype, , superOptions = ''] = right.split(' ')
    if (fstype !== 'cgroup' || !(fields[5] ?? '').split(',').includes('rw')) continue
    const options = superOptions.split(',')
    for (const c of BOUND_CONTROLLERS)
      if (options.includes(c) && out[c] === undefined)
        out[c] = { at: unescapeMount(fields[4] ?? ''), root: unescapeMount(fields[3] ?? '/') }
  }
  return out
}

/** The host's own path in each bound controller's v1 hierarchy, from /proc/self/cgroup. */
export function ownPaths(procCgroup: string): Partial<Record<BoundController, string>> {
  const out: Partial<Record<BoundController, string>> = {}
  for (const line of procCgroup.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line)
    if (!match) continue
    for (const c of BOUND_CONTROLLERS) if ((match[1] ?? '').split(',').includes(c)) out[c] = match[2]
  }
  return out
}

/** The directory of `own` under a mount of the hierarchy rooted at `root`, or undefined when the mount does not show it. */
function dirOf(mount: { at: string; root: string }, own: string): string | undefined {
  if (mount.root === '/') return path.join(mount.at, own)
  if (own !== mount.root && !own.startsWith(`${mount.root}/`)) return undefined
  return path.join(mount.at, own.slice(mount.root.length))
}

/** A number a cgroup file holds, or undefined. */
export function readNumber(file: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim())
    return Number.isFinite(n) ? n : undefined
  } catch {
    return undefined
  }
}

/** The least `memory.limit_in_bytes` from `dir` up to `top` (a limit at or above the machine's memory is none). */
function memoryLimitOf(dir: string, top: string): number | undefined {
  let least: number | undefined
  for (let d = dir; d.startsWith(top); d = path.dirname(d)) {
    const n = readNumber(path.join(d, 'memory.limit_in_bytes'))
    if (n !== undefined && n < os.totalmem() && (least === undefined || n < least)) least = n
    if (d === top) break
  }
  return least
}

let cached: CgroupHierarchies | undefined

/** The hierarchies this host may bound its runs in (read once; none unless root). */
export function cgroupHierarchies(): CgroupHierarchies {
  if (cached !== undefined) return cached
  const found: CgroupHierarchies = { dirs: {}, memsw: false, memoryLimit: undefined }
  cached = found
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return found
  let mounts: ReturnType<typeof v1Mounts>
  let own: ReturnType<typeof ownPaths>
  try {
    mounts = v1Mounts(fs.readFileSync('/proc/self/mountinfo', 'utf8'))
    own = ownPaths(fs.readFileSync('/proc/self/cgroup', 'utf8'))
  } catch {
    return found
  }
  for (const c of BOUND_CONTROLLERS) {
    const mount = mounts[c]
    const ownPath = own[c]
    const dir = mount && ownPath !== undefined ? dirOf(mount, ownPath) : undefined
    if (dir === undefined || !fs.existsSync(path.join(dir, 'cgroup.procs'))) continue
    try {
      fs.accessSync(dir, fs.constants.W_OK)
      found.dirs[c] = dir
    } catch {}
    if (c === 'memory' && mount) {
      found.memsw = fs.existsSync(path.join(dir, 'memory.memsw.limit_in_bytes'))
      found.memoryLimit = memoryLimitOf(dir, mount.at)
    }
  }
  return found
}
