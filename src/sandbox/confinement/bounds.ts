/**
 * What bounds a confined run's tree on this host, and how: the policy's limits and the defaults
 * (src/policy/defaults.ts) made concrete as cgroups of the run's own where the host can make them
 * (src/subprocess/cgroup/hierarchy.ts: cgroup v1, root), rlimits for the rest, and each limit's
 * verdict for the accounts. Pure but for {@link hostBounds}, which reads the host once.
 */
import os from 'node:os'
import type { ClassVerdict } from '../../policy/backends.js'
import {
  CONFINED_OOM_SCORE_ADJ,
  DEFAULT_MEMORY_FRACTION,
  DEFAULT_PROCESS_LIMIT,
  DEFAULT_TEMP_FRACTION,
} from '../../policy/defaults.js'
import type { ResourceLimits } from '../../policy/vocabulary.js'
import { cgroupHierarchies } from '../../subprocess/cgroup/hierarchy.js'
import { tempMountRefusal } from '../../subprocess/private-dirs/temp-mount.js'
import type { SubprocessBounds } from '../../subprocess/cgroup/leaf.js'

/** What the host offers to bound a run with. */
export interface HostBounds {
  /** The cgroup controllers a run's leaf can be made in. */
  cgroups: { pids: boolean; memory: boolean; cpu: boolean }
  /** The memory controller counts swap too. */
  memsw: boolean
  /** The host's memory: the machine's, or its own cgroup's limit when less (bytes). */
  memory: number
  /** Why a session's TMPDIR cannot be a size-bounded tmpfs here (undefined: it is one). */
  tempRefusal?: string | undefined
}

/** No cgroup at all (a non-root host, cgroup v2, another platform). */
export const NO_HOST_BOUNDS: HostBounds = {
  cgroups: { pids: false, memory: false, cpu: false },
  memsw: false,
  memory: 0,
  tempRefusal: 'no host facts',
}

/** This host's bounds (the hierarchies are read once per process). */
export function hostBounds(): HostBounds {
  const h = cgroupHierarchies()
  return {
    cgroups: { pids: h.dirs.pids !== undefined, memory: h.dirs.memory !== undefined, cpu: h.dirs.cpu !== undefined },
    memsw: h.memsw,
    memory: Math.min(os.totalmem(), h.memoryLimit ?? Number.POSITIVE_INFINITY),
    tempRefusal: tempMountRefusal(),
  }
}

/** The limits a run gets on `host`: the policy's, else the defaults the host can enforce. */
export function effectiveLimits(limits: ResourceLimits | undefined, host: HostBounds): ResourceLimits {
  const out: ResourceLimits = { ...limits }
  if (out.processes === undefined && host.cgroups.pids) out.processes = DEFAULT_PROCESS_LIMIT
  if (out.memoryBytes === undefined && host.cgroups.memory && host.memory > 0)
    out.memoryBytes = Math.floor(host.memory * DEFAULT_MEMORY_FRACTION)
  if (out.tempBytes === undefined && host.tempRefusal === undefined && host.memory > 0)
    out.tempBytes = Math.floor(host.memory * DEFAULT_TEMP_FRACTION)
  return out
}

/** The run's tree bounds as the runtime applies them (cgroups where the host has them; the OOM score always). */
export function subprocessBounds(limits: ResourceLimits | undefined, host: HostBounds): SubprocessBounds {
  const l = effectiveLimits(limits, host)
  const out: SubprocessBounds = { oomScoreAdj: CONFINED_OOM_SCORE_ADJ }
  if (host.cgroups.pids && l.processes !== undefined) out.pids = l.processes
  if (host.cgroups.memory && l.memoryBytes !== undefined) out.memoryBytes = l.memoryBytes
  if (host.cgroups.cpu) out.cpuGroup = true
  return out
}

/** Bytes as a person reads them (KiB, MiB, GiB; one decimal where it is not whole). */
export function sizeText(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let n = bytes
  let u = 0
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024
    u++
  }
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${units[u]}`
}

/** What the command can do about its raised oom_score_adj, as the account says it. */
const OOM_TEXT = `a confined run's oom_score_adj is raised to ${CONFINED_OOM_SCORE_ADJ} before exec where the native addon starts it (not on the portable path nor under a setuid bwrap), so the OOM killer takes it before the host, and the command cannot write /proc/self/oom_score_adj (outside Landlock's write domain, or a read-only /proc); the kernel itself would let a process without CAP_SYS_RESOURCE return it to its value before the raise where a non-root host raised it, so a memory bound is the real guard`

/** The `memory` class: a memory cgroup bounds the tree, else nothing does. */
export function memoryVerdict(host: HostBounds, limits: ResourceLimits | undefined): ClassVerdict {
  const bytes = effectiveLimits(limits, host).memoryBytes
  if (host.cgroups.memory && bytes !== undefined)
    return {
      governed: true,
      how: `a memory cgroup of the run's own bounds its tree to ${sizeText(bytes)} (memory.limit_in_bytes${host.memsw ? ', and memsw so swap cannot stand in' : ''}; page cache counted): past it the OOM killer acts inside the run; ${OOM_TEXT}`,
    }
  return {
    governed: false,
    how: `not governed: no writable memory cgroup here (cordon uses cgroup v1's memory controller, as root), and RLIMIT_AS bounds one process's address space, not memory; ${OOM_TEXT}`,
  }
}

/** The `temp` class: one size-bounded tmpfs holding the session's TMPDIR and /dev/shm where the host can mount one. */
export function tempVerdict(host: HostBounds, limits: ResourceLimits | undefined): ClassVerdict {
  const bytes = effectiveLimits(limits, host).tempBytes
  if (host.tempRefusal === undefined && bytes !== undefined) {
    const source =
      limits?.tempBytes === undefined ? ` (by default ${DEFAULT_TEMP_FRACTION * 100}% of the host's memory)` : ''
    return {
      governed: true,
      how: `the session's TMPDIR and its /dev/shm under bubblewrap share one tmpfs of ${sizeText(bytes)}${source} the host mounted (writes past it fail ENOSPC), kept across the sandbox's runs on both backends; its pages are memory, counted in the run's memory bound`,
    }
  }
  return {
    governed: false,
    how: `not governed: the session's TMPDIR and its /dev/shm under bubblewrap are directories of the host's disk (${host.tempRefusal ?? "the host's memory is unknown"}), so a run can fill the disk through them; limits.fileSizeBytes bounds one file`,
  }
}

/** The `cpu` class: RLIMIT_CPU per process when asked; a cpu cgroup makes the tree one task's weight. */
export function cpuVerdict(host: HostBounds, limits: ResourceLimits | undefined): ClassVerdict {
  const share = host.cgroups.cpu
    ? "; the tree shares the CPU as one cgroup weighing one task of the host's, so it cannot starve the host"
    : ''
  if (limits?.cpuSeconds !== undefined)
    return {
      governed: true,
      how: `RLIMIT_CPU in the command before exec: each process gets SIGXCPU after ${limits.cpuSeconds} s of CPU and SIGKILL a second later (per process: a tree of many processes uses that much each; the run's timeout bounds the wall time)${share}`,
    }
  return { governed: host.cgroups.cpu, how: `no CPU-time limit (the run's timeout bounds its wall time)${share}` }
}

/** The process limit's part of the `resources` verdict: a pids cgroup, else RLIMIT_NPROC (not for uid 0). */
export function processesVerdict(host: HostBounds, limits: ResourceLimits | undefined, uid0: boolean): ClassVerdict {
  const n = effectiveLimits(limits, host).processes
  if (host.cgroups.pids && n !== undefined)
    return { governed: true, how: `a pids cgroup of the run's own holds its tree to ${n} processes and threads` }
  if (limits?.processes === undefined) return { governed: true, how: 'no process limit' }
  if (uid0)
    return {
      governed: false,
      how: 'RLIMIT_NPROC does not bind uid 0: the process limit is not enforced for a root command (no writable pids cgroup here)',
    }
  return { governed: true, how: `RLIMIT_NPROC: at most ${n} processes of the run's uid, host-wide` }
}

/** One limit as `cordon explain` says it: its value on this host (or none) and what enforces it. */
export interface ExplainedLimit {
  name: 'processes' | 'memory' | 'temp' | 'cpu' | 'address space' | 'file size'
  value: string
  how: string
}

/** Every limit of a run on `host`: the policy's or the default, and its mechanism or `not governed`. */
export function explainedLimits(limits: ResourceLimits | undefined, host: HostBounds, uid0: boolean): ExplainedLimit[] {
  const l = effectiveLimits(limits, host)
  const bytes = (n: number | undefined) => (n === undefined ? 'none' : sizeText(n))
  const source = (key: keyof ResourceLimits) =>
    limits?.[key] === undefined && l[key] !== undefined ? ' (default)' : ''
  const processes = processesVerdict(host, limits, uid0)
  const memory = memoryVerdict(host, limits)
  const temp = tempVerdict(host, limits)
  return [
    {
      name: 'processes',
      value: `${l.processes ?? 'none'}${source('processes')}`,
      how: processes.governed ? processes.how : `not governed: ${processes.how}`,
    },
    {
      name: 'memory',
      value: `${bytes(l.memoryBytes)}${source('memoryBytes')}`,
      how: memory.governed
        ? `a memory cgroup of the run's own (memory.limit_in_bytes${host.memsw ? ' and memsw' : ''}); oom_score_adj ${CONFINED_OOM_SCORE_ADJ}`
        : `not governed: no writable memory cgroup here (cgroup v1, root); oom_score_adj ${CONFINED_OOM_SCORE_ADJ}`,
    },
    {
      name: 'temp',
      value: `${bytes(l.tempBytes)}${source('tempBytes')}`,
      how: temp.governed ? "one tmpfs holding the session's TMPDIR and /dev/shm (bubblewrap)" : temp.how,
    },
    {
      name: 'cpu',
      value: l.cpuSeconds === undefined ? 'none' : `${l.cpuSeconds} s`,
      how: cpuVerdict(host, limits).how,
    },
    {
      name: 'address space',
      value: bytes(l.addressSpaceBytes),
      how:
        l.addressSpaceBytes === undefined
          ? 'no default (runtimes reserve large address spaces)'
          : 'RLIMIT_AS per process',
    },
    { name: 'file size', value: bytes(l.fileSizeBytes), how: 'RLIMIT_FSIZE per file' },
  ]
}
