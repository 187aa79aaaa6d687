/**
 * Enforcement, told truthfully: for one backend, host and policy, every effect class the policy
 * promises with how it holds (or why it does not), and the verdict — `full` iff every promised
 * class holds. Pure functions of the probe's facts; the probe's canary checks the same classes
 * on the real kernel before a backend is called usable.
 */
import type { ClassVerdict, EnforcementAccount } from '../../policy/backends.js'
import {
  ALWAYS_PROMISED_CLASSES,
  cutsNetwork,
  type ConfinedSandboxMode,
  type EffectClass,
  LIMIT_CLASSES,
  type NetworkPolicy,
  type ResourceLimits,
} from '../../policy/vocabulary.js'
import { cpuVerdict, type HostBounds, memoryVerdict, NO_HOST_BOUNDS, processesVerdict, tempVerdict } from './bounds.js'

/** What the probe learned about the host, as far as the accounts care. */
export interface BackendFacts {
  /** The Landlock ABI the plan drives (0: none). */
  abi: number
  /** The seccomp program loads. */
  seccomp: boolean
  /** A supervisor outside the sandbox runs every command (cordon-exec). */
  supervisor: boolean
  /**
   * Private namespaces available to a run; `keys`: a mount namespace masking /proc/keys; `view`: a
   * mount namespace where the host is read-only but for the writable set.
   */
  namespaces: { ipc: boolean; net: boolean; keys?: boolean; view?: boolean }
  /** The command runs as uid 0 (RLIMIT_NPROC does not bind it). */
  uid0: boolean
  /** The cgroups a run's tree can be bounded in (absent: none). */
  bounds?: HostBounds | undefined
}

/** What the plan found about the policy's hidden and protected paths on this host. */
export interface ShieldFacts {
  /** How many hidden places the policy names (defaults included). */
  hiddenPlaces: number
  /** The hidden paths that exist (canonical; listed on first read, so read it only when needed). */
  hidden: readonly string[]
  /** Hidden places that lie inside a writable grant (canonical). */
  hiddenInWritable: readonly string[]
  /** Protected paths inside writable roots (canonical). */
  protectedInWritable: readonly string[]
  /** Protected paths that are missing: one the run makes is moved aside once it is over. */
  mustNotAppear?: readonly string[] | undefined
  /** Symlinks on the way to a protected path (and npm's `.bin/cordon`): made again after the run if changed. */
  mustStay?: ReadonlyArray<{ path: string; target: string }> | undefined
}

/** The parts of a policy the accounts read. */
export interface AccountPolicy {
  mode: ConfinedSandboxMode
  network?: NetworkPolicy | undefined
  limits?: ResourceLimits | undefined
  /** Absent: nothing hidden, nothing protected inside a writable root. */
  shield?: ShieldFacts | undefined
}

/**
 * The classes `policy` promises: every confined run's, plus network when denied, each limit's
 * class when the policy sets that limit (src/policy/vocabulary.ts:LIMIT_CLASSES), secrets when
 * something is hidden, protected when a protected path lies inside a writable root.
 */
export function promisedClasses(policy: AccountPolicy): EffectClass[] {
  const classes: EffectClass[] = [...ALWAYS_PROMISED_CLASSES]
  if (cutsNetwork(policy.network)) classes.push('network')
  for (const [limit, cls] of Object.entries(LIMIT_CLASSES) as Array<[keyof ResourceLimits, EffectClass]>)
    if (policy.limits?.[limit] !== undefined && !classes.includes(cls)) classes.push(cls)
  if ((policy.shield?.hiddenPlaces ?? 0) > 0) classes.push('secrets')
  if ((policy.shield?.protectedInWritable.length ?? 0) > 0) classes.push('protected')
  return classes
}

/** What every path-based hiding leaves visible. */
export const BY_PATH =
  'hiding is by path: a hard link or another mount of the same file system elsewhere still shows the content'

/** Up to four paths, then how many more. */
export const listed = (paths: readonly string[]) =>
  paths.length <= 4 ? paths.join(', ') : `${paths.slice(0, 4).join(', ')} and ${paths.length - 4} more`

/** A class that holds, and how. */
export const yes = (how: string): ClassVerdict => ({ governed: true, how })
/** A class that does not hold, and why. */
export const no = (how: string): ClassVerdict => ({ governed: false, how })

/** The resources class: a pids cgroup or RLIMIT_NPROC (which does not bind uid 0) for processes, setrlimit for the rest. */
export function resourcesVerdict(facts: LimitFacts, limits: ResourceLimits | undefined): ClassVerdict {
  const processes = processesVerdict(facts.bounds ?? NO_HOST_BOUNDS, limits, facts.uid0)
  const how = `${processes.how}; setrlimit in the command before exec for the rest (RLIMIT_AS, RLIMIT_FSIZE as asked)`
  return processes.governed ? yes(how) : no(how)
}

/** What the limit classes' verdicts rest on: the host's bounds and whether commands run as uid 0. */
export type LimitFacts = Pick<BackendFacts, 'bounds' | 'uid0'>

/** The verdicts of every limit class (`resources`, `memory`, `temp`, `cpu`) on this host. */
export function limitVerdicts(
  facts: LimitFacts,
  limits: ResourceLimits | undefined,
): Record<'resources' | 'memory' | 'temp' | 'cpu', ClassVerdict> {
  const bounds = facts.bounds ?? NO_HOST_BOUNDS
  return {
    resources: resourcesVerdict(facts, limits),
    memory: memoryVerdict(bounds, limits),
    temp: tempVerdict(bounds, limits),
    cpu: cpuVerdict(bounds, limits),
  }
}

/**
 * `account` as it holds for a run that joins no cgroup leaves (a confined terminal: node-pty starts
 * it): each limit class as on this host without cgroups, the verdict counted again.
 */
export function withoutCgroupLeaves(
  account: EnforcementAccount,
  limits: ResourceLimits | undefined,
  facts: LimitFacts,
): EnforcementAccount {
  const bounds = { ...(facts.bounds ?? NO_HOST_BOUNDS), cgroups: { pids: false, memory: false, cpu: false } }
  const promised = [...account.governed, ...account.ungoverned].filter((c) => c !== 'signals')
  return accountOf({ ...account.classes, ...limitVerdicts({ bounds, uid0: facts.uid0 }, limits) }, promised)
}

/** Limit classes a policy does not promise but the host bounds anyway (the defaults): listed, never counted. */
const DEFAULT_BOUND_CLASSES: readonly EffectClass[] = ['memory', 'temp', 'cpu']

/** The account of the promised classes: `full` iff every one holds (`signals` listed with `processes`). */
export function accountOf(
  classes: Partial<Record<EffectClass, ClassVerdict>>,
  promised: EffectClass[],
): EnforcementAccount {
  const governed = promised.filter((c) => classes[c]?.governed === true)
  const ungoverned = promised.filter((c) => classes[c]?.governed !== true)
  const listed: Partial<Record<EffectClass, ClassVerdict>> = {}
  for (const c of promised) listed[c] = classes[c] ?? no('not governed by this backend')
  // network: inherit promises nothing, but what stays reachable is said all the same.
  if (!promised.includes('network') && classes.network) listed.network = classes.network
  for (const c of DEFAULT_BOUND_CLASSES) if (!promised.includes(c) && classes[c]?.governed) listed[c] = classes[c]
  // `signals` is the old name of `processes`: listed wherever processes is.
  if (listed.processes) listed.signals = listed.processes
  if (governed.includes('processes')) governed.push('signals')
  return { enforcement: ungoverned.length === 0 ? 'full' : 'partial', classes: listed, governed, ungoverned }
}
