/**
 * The one confinement plan per policy, as the Linux backends share it: everything a backend does
 * for the policy, built purely from the grants, the host's facts and the read view (sandbox/landlock/plan.ts,
 * sandbox/bubblewrap/plan.ts). `LocalSandbox.confine()`, the probe's canary and `cordon explain` all use
 * it, so what is explained is what runs. Here: the plan's shape, the host it is built for, the
 * command's own steps, and the cordon-exec `init` arguments that carry them.
 */
import type { EnforcementAccount, SandboxBackendName } from '../../policy/backends.js'
import type { SandboxGrants } from '../../policy/grants.js'
import { PROXY_PORT } from '../../policy/defaults.js'
import { allowListOf, type ResourceLimits, type SandboxPolicy } from '../../policy/vocabulary.js'
import { controllersOf, type SubprocessBounds } from '../../subprocess/cgroup/leaf.js'
import type { ConfinementSteps } from '../../subprocess/types.js'
import type { LandlockRulesetPlan } from '../ruleset/landlock.js'
import type { SeccompArch } from '../seccomp/bpf.js'
import type { SeccompInput } from '../seccomp/rules.js'
import type { BubblewrapMounts } from '../view/mounts.js'
import type { ShieldFacts } from './account.js'
import type { HostBounds } from './bounds.js'

/** What the host offers a plan (from the probe and the addon). */
export interface PlanHost {
  arch: SeccompArch
  /** The Landlock ABI driven (0: none). */
  abi: number
  /** The seccomp program loads. */
  seccomp: boolean
  /** cordon-exec is there: every run gets a supervisor outside the sandbox. */
  supervisor: boolean
  /** The host may drop the bounding set (CAP_SETPCAP). */
  setpcap: boolean
  capLast: number
  uid: number
  /** A run may get a private namespace: root directly, others through a user namespace. */
  namespaces: { available: boolean; viaUserNamespace: boolean }
  /** The cgroups a run's tree can be bounded in (absent: none). */
  bounds?: HostBounds | undefined
}

/** `RLIMIT_*` numbers (the same on x86_64 and aarch64). */
export const RLIMIT = { CPU: 0, FSIZE: 1, CORE: 4, NPROC: 6, AS: 9 } as const

/** The plan of one policy on one backend. */
export interface ConfinementPlan {
  backend: Exclude<SandboxBackendName, 'seatbelt'>
  policy: SandboxPolicy
  account: EnforcementAccount
  grants: SandboxGrants
  /** The session's private temp dir (TMPDIR). */
  tempDir: string | undefined
  /** Paths the command may write (for denial facts). */
  writable: string[]
  /** The command's Landlock domain (landlock), or the write domain inside bwrap (bubblewrap). */
  ruleset: LandlockRulesetPlan | undefined
  /**
   * bubblewrap: the rule cordon-exec adds inside on the sandbox's own /dev/pts (a devpts that is
   * not the host's, device `hostDev`), so tools that open ptys of their own work (tmux, script).
   */
  privateDevpts?: { allowed: number; hostDev: number } | undefined
  seccomp: { input: SeccompInput; program: Buffer | undefined }
  /**
   * Namespaces the supervisor enters before it forks the command (landlock); `keys`: the launcher's
   * masked /proc/keys; `view`: a read-only view of the host but for these writable paths.
   */
  namespaces: { ipc: boolean; net: boolean; user: boolean; keys?: boolean; view?: readonly string[] }
  /** The command's own steps (the ruleset handle is added by the sandbox when it confines). */
  steps: Omit<ConfinementSteps, 'ruleset'>
  /** bubblewrap only: bwrap's own steps (no_new_privs and the launcher program). */
  wrapperSteps: Omit<ConfinementSteps, 'ruleset'> | undefined
  /** The read view's epoch this plan was built from. */
  viewEpoch: number | undefined
  /** bubblewrap only: the hidden, protected, masked and kept mounts. */
  mounts: BubblewrapMounts | undefined
  /** The hidden and protected paths as the accounts saw them. */
  shield: ShieldFacts | undefined
  /** Environment every confined spec gets (the package caches); a caller's explicit entry wins. */
  env: Record<string, string>
  /** What bounds the run's tree: its cgroups (pids, memory, cpu) and oom_score_adj (src/sandbox/confinement/bounds.ts). */
  bounds: SubprocessBounds
  /** The workspace owner the command runs as, when not the host's own user (src/sandbox/run-as.ts). */
  runAs?: { uid: number; gid: number; name: string | undefined; home: string | undefined } | undefined
}

/**
 * The rlimits of a run: no core dumps, and the policy's limits; a process limit only where no pids
 * cgroup holds the tree (`pidsCgroup`), CPU time soft at the limit and hard a second later.
 */
export function rlimitsFor(
  limits: ResourceLimits | undefined,
  pidsCgroup = false,
): NonNullable<ConfinementSteps['rlimits']> {
  const out: Array<{ resource: number; soft: number; hard: number }> = [{ resource: RLIMIT.CORE, soft: 0, hard: 0 }]
  if (limits?.processes !== undefined && !pidsCgroup)
    out.push({ resource: RLIMIT.NPROC, soft: limits.processes, hard: limits.processes })
  if (limits?.addressSpaceBytes !== undefined)
    out.push({ resource: RLIMIT.AS, soft: limits.addressSpaceBytes, hard: limits.addressSpaceBytes })
  if (limits?.fileSizeBytes !== undefined)
    out.push({ resource: RLIMIT.FSIZE, soft: limits.fileSizeBytes, hard: limits.fileSizeBytes })
  if (limits?.cpuSeconds !== undefined)
    out.push({ resource: RLIMIT.CPU, soft: limits.cpuSeconds, hard: limits.cpuSeconds + 1 })
  return out
}

/** The paths a plan's command may write: the writable grants and the writable devices (for denial facts). */
export function writableOf(grants: SandboxGrants): string[] {
  return [
    ...grants.writable.map((g) => g.path),
    ...grants.devices.filter((d) => d.access.includes('write')).map((d) => d.path),
  ]
}

/** The command's own steps: rlimits, an empty capability set (and bounding set where allowed), no_new_privs, the seccomp program. */
export function commandSteps(host: PlanHost, policy: SandboxPolicy, program: Buffer | undefined) {
  return {
    rlimits: rlimitsFor(policy.limits, host.bounds?.cgroups.pids === true),
    dropCaps: true,
    dropBounding: host.setpcap,
    capLast: host.capLast,
    noNewPrivs: true,
    landlockFlags: 0,
    filter: program,
  }
}

/** The init arguments of the run's bounds: its oom_score_adj (Landlock), the fds of its cgroups from `from` on. */
function boundArgs(plan: ConfinementPlan, from: number | undefined): string[] {
  const args: string[] = []
  // Inside bwrap /proc is read-only: there bwrap's own clone child raised it (its wrapper steps).
  if (plan.backend === 'landlock' && plan.bounds.oomScoreAdj !== undefined)
    args.push('--oom-score-adj', String(plan.bounds.oomScoreAdj))
  if (from !== undefined)
    for (let i = 0; i < controllersOf(plan.bounds).length; i++) args.push('--cgroup-fd', String(from + i))
  return args
}

/**
 * cordon-exec `init` arguments for a plan's command steps (the ruleset comes as an fd or as rules).
 * A terminal's supervisor has no status fd (node-pty passes only the pty): it exits as the command did.
 */
export function initArgs(
  plan: ConfinementPlan,
  options: {
    statusFd: number | undefined
    graceMs: number
    background: boolean
    terminal?: boolean
    ruleset: string[]
    /** Under a network allow-list: the fd the supervisor hands its proxy listener over (or a placeholder the spawn fills). */
    proxyFd?: number | string | undefined
    /** The first of the run's cgroup.procs fds (one per controller of `plan.bounds`); absent: none is handed in. */
    cgroupFdFrom?: number | undefined
  },
): string[] {
  const s = plan.steps
  const args = ['init']
  if (options.statusFd !== undefined) args.push('--status-fd', String(options.statusFd))
  args.push('--grace-ms', String(Math.ceil(options.graceMs)))
  if (options.background) args.push('--background')
  if (options.terminal) args.push('--terminal')
  if (s.dropCaps) args.push('--drop-caps', '--cap-last', String(s.capLast))
  if (s.dropBounding) args.push('--drop-bounding')
  if (s.noNewPrivs) args.push('--no-new-privs')
  if (s.credentials) args.push('--credentials', `${s.credentials.uid}:${s.credentials.gid}`)
  for (const l of s.rlimits ?? []) args.push('--rlimit', `${l.resource}:${l.soft}:${l.hard}`)
  if (plan.namespaces.ipc) args.push('--unshare-ipc')
  if (plan.namespaces.net) args.push('--unshare-net')
  if (plan.namespaces.user) args.push('--unshare-user')
  if (plan.namespaces.view) {
    args.push('--read-only-view')
    for (const p of plan.namespaces.view) args.push('--view-writable', p)
  }
  args.push(...boundArgs(plan, options.cgroupFdFrom))
  if (allowListOf(plan.policy.network) && options.proxyFd !== undefined)
    args.push('--proxy-listener', `${PROXY_PORT}:${options.proxyFd}`)
  args.push(...options.ruleset)
  if (s.filter) args.push('--seccomp-hex', s.filter.toString('hex'))
  return args
}
