/**
 * The one confinement plan per policy: everything a backend does for it, built purely from the
 * grants, the host's facts and (for Landlock) the read view. `LocalSandbox.confine()`, the probe's
 * canary and `cordon explain` all use it, so what is explained is what runs.
 *
 * Landlock: the command runs below a supervisor outside the sandbox and applies, in order,
 * RLIMIT_CORE 0 and the policy's limits, an empty capability set, no_new_privs, one Landlock
 * domain (the read view, the writable grants, the devices; TCP when denied without a private
 * network; both scopes) and the seccomp program, inside the private namespaces the supervisor
 * entered (IPC as root; IPC and network, through a user namespace, for a denied network).
 *
 * bubblewrap: bwrap's mounts and namespaces, and inside them cordon-exec as the command's init,
 * which applies a Landlock domain that handles only writes (for what a read-only bind cannot
 * refuse: existing FIFOs and sockets, reopens through /proc/self/fd) and the seccomp program.
 */
import type { EnforcementAccount, SandboxBackendName } from '../../policy/backends.js'
import { networkOf } from '../../policy/defaults.js'
import { GRANT_TABLE, type SandboxGrants } from '../../policy/grants.js'
import type { ResourceLimits, SandboxPolicy } from '../../policy/vocabulary.js'
import type { ConfinementSteps } from '../../subprocess/types.js'
import type { BubblewrapMounts } from '../bubblewrap/argv.js'
import { bubblewrapAccount, landlockAccount, type ShieldFacts } from './account.js'
import {
  handledFsFor,
  handledNetFor,
  type LandlockRulesetPlan,
  planRuleset,
  type RulesetEntry,
  rightsFor,
  scopedFor,
  WRITE_RIGHTS,
} from '../ruleset/landlock.js'
import type { ReadViewSnapshot } from '../view/read-view.js'
import type { SeccompArch } from '../seccomp/bpf.js'
import { bubblewrapLauncherProgram, type SeccompInput, seccompProgramFor } from '../seccomp/rules.js'

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
}

/** `RLIMIT_*` numbers (the same on x86_64 and aarch64). */
export const RLIMIT = { FSIZE: 1, CORE: 4, NPROC: 6, AS: 9 } as const

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
  /** Namespaces the supervisor enters before it forks the command (landlock); `keys`: the launcher's masked /proc/keys. */
  namespaces: { ipc: boolean; net: boolean; user: boolean; keys?: boolean }
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
  /** The workspace owner the command runs as, when not the host's own user (src/sandbox/run-as.ts). */
  runAs?: { uid: number; gid: number; name: string | undefined; home: string | undefined } | undefined
}

/** The rlimits of a run: no core dumps, and the policy's limits. */
export function rlimitsFor(limits: ResourceLimits | undefined): NonNullable<ConfinementSteps['rlimits']> {
  const out: Array<{ resource: number; soft: number; hard: number }> = [{ resource: RLIMIT.CORE, soft: 0, hard: 0 }]
  if (limits?.processes !== undefined)
    out.push({ resource: RLIMIT.NPROC, soft: limits.processes, hard: limits.processes })
  if (limits?.addressSpaceBytes !== undefined)
    out.push({ resource: RLIMIT.AS, soft: limits.addressSpaceBytes, hard: limits.addressSpaceBytes })
  if (limits?.fileSizeBytes !== undefined)
    out.push({ resource: RLIMIT.FSIZE, soft: limits.fileSizeBytes, hard: limits.fileSizeBytes })
  return out
}

function writableOf(grants: SandboxGrants): string[] {
  return [
    ...grants.writable.map((g) => g.path),
    ...grants.devices.filter((d) => d.access.includes('write')).map((d) => d.path),
  ]
}

function commandSteps(host: PlanHost, policy: SandboxPolicy, program: Buffer | undefined) {
  return {
    rlimits: rlimitsFor(policy.limits),
    dropCaps: true,
    dropBounding: host.setpcap,
    capLast: host.capLast,
    noNewPrivs: true,
    landlockFlags: 0,
    filter: program,
  }
}

/** The Landlock backend's plan for `policy`. */
export function landlockPlan(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  host: PlanHost,
  view: Pick<ReadViewSnapshot, 'epoch' | 'entries'>,
  shield?: ShieldFacts,
  env: Record<string, string> = {},
): ConfinementPlan {
  const deny = policy.network === 'deny'
  const ns = host.namespaces
  // Root gets a private IPC namespace always (it is free); through a user namespace (which shows
  // files of unmapped owners as nobody) only when the network is denied and a namespace is needed.
  const privateNet = deny && ns.available
  const privateIpc = ns.available && (!ns.viaUserNamespace || privateNet)
  // Root can give the launcher a mount namespace of its own, where /proc/keys reads empty.
  const maskKeys = ns.available && !ns.viaUserNamespace
  const namespaces = {
    ipc: privateIpc,
    net: privateNet,
    user: ns.viaUserNamespace && (privateIpc || privateNet),
    keys: maskKeys,
  }
  const entries: RulesetEntry[] = [
    ...view.entries,
    ...grants.readable.map((r) => ({ path: r.path, rights: rightsFor(r.access), origin: 'read' as const })),
    ...grants.writable.map((w) => ({ path: w.path, rights: rightsFor(w.access), origin: 'writable' as const })),
    ...grants.devices.map((d) => ({ path: d.path, rights: rightsFor(d.access), origin: 'device' as const })),
  ]
  const ruleset =
    host.abi >= 1
      ? planRuleset(entries, {
          abi: host.abi,
          handledFs: handledFsFor(host.abi),
          handledNet: handledNetFor(host.abi, networkOf(policy), privateNet),
          scoped: scopedFor(host.abi),
        })
      : undefined
  const input: SeccompInput = {
    arch: host.arch,
    mode: policy.mode,
    network: networkOf(policy),
    privatePid: false,
    privateIpc,
    privateNet,
    // Where `full` is promised, no watch may see into the hidden places (Landlock does not govern
    // watches); workspace-write keeps them for file watchers and its account says so.
    refuseWatches: policy.mode === 'read-only',
  }
  const program = host.seccomp ? seccompProgramFor(input) : undefined
  const account = landlockAccount(
    {
      abi: host.abi,
      seccomp: host.seccomp,
      supervisor: host.supervisor,
      namespaces: { ipc: privateIpc, net: privateNet, keys: maskKeys },
      uid0: host.uid === 0,
    },
    { ...policy, shield },
  )
  return {
    backend: 'landlock',
    policy,
    account,
    grants,
    tempDir: grants.tempDir,
    writable: writableOf(grants),
    ruleset,
    seccomp: { input, program },
    namespaces,
    steps: commandSteps(host, policy, program),
    wrapperSteps: undefined,
    viewEpoch: view.epoch,
    mounts: undefined,
    shield,
    env,
  }
}

/** The bubblewrap backend's plan for `policy` (the bwrap argv itself is built per spec). */
export function bubblewrapPlan(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  host: PlanHost,
  wrapper: { setuid: boolean; hostDevpts?: number | undefined },
  layered?: {
    viewEpoch: number
    mounts: BubblewrapMounts
    shield: ShieldFacts
    env: Record<string, string>
    /** The read view's rules: hidden places stay closed by inode, whatever happens to a mask. */
    readEntries?: readonly RulesetEntry[]
  },
): ConfinementPlan {
  const deny = policy.network === 'deny'
  const shm = layered?.mounts.shm
  const reads = layered?.readEntries
  const entries: RulesetEntry[] = [
    ...(reads ?? []),
    ...(reads
      ? grants.readable.map((r) => ({ path: r.path, rights: rightsFor(r.access), origin: 'read' as const }))
      : []),
    ...grants.writable.map((w) => ({ path: w.path, rights: rightsFor(w.access), origin: 'writable' as const })),
    ...(shm === undefined
      ? []
      : [
          {
            path: shm,
            insidePath: '/dev/shm',
            rights: rightsFor(GRANT_TABLE.writableAccess),
            origin: 'writable' as const,
          },
        ]),
    ...grants.devices.map((d) => ({ path: d.path, rights: rightsFor(d.access), origin: 'device' as const })),
  ]
  const ruleset =
    host.abi >= 3
      ? planRuleset(entries, {
          abi: host.abi,
          // With the read view inside, reads are handled too: a mask a host rename detaches, or a
          // hidden file made during the run, is still closed by inode (mounts are bwrap's layer).
          handledFs: reads ? handledFsFor(host.abi) : handledFsFor(host.abi) & WRITE_RIGHTS,
          handledNet: 0,
          scoped: scopedFor(host.abi),
        })
      : undefined
  const input: SeccompInput = {
    arch: host.arch,
    mode: policy.mode,
    network: networkOf(policy),
    privatePid: true,
    privateIpc: true,
    privateNet: deny,
    privateDevpts: true,
  }
  const program = host.seccomp ? seccompProgramFor(input) : undefined
  // The write domain must let the command open ptys on its own /dev/pts (bwrap's --dev makes one).
  const privateDevpts = ruleset && {
    allowed: rightsFor(['read', 'write', 'ioctl-dev']) & ruleset.handledFs,
    hostDev: wrapper.hostDevpts ?? 0,
  }
  const account = bubblewrapAccount(
    {
      abi: host.abi,
      seccomp: host.seccomp,
      supervisor: host.supervisor,
      namespaces: { ipc: true, net: deny },
      uid0: host.uid === 0,
    },
    { ...policy, shield: layered?.shield },
  )
  // Inside bwrap (--cap-drop ALL) nothing can drop a bounding set: capset and no_new_privs only.
  const steps = { ...commandSteps(host, policy, program), dropBounding: false }
  // A setuid bwrap must not run under no_new_privs (it could not gain its privileges).
  const wrapperSteps = wrapper.setuid
    ? undefined
    : {
        dropCaps: false,
        dropBounding: false,
        capLast: host.capLast,
        noNewPrivs: true,
        filter: host.seccomp ? bubblewrapLauncherProgram(host.arch) : undefined,
      }
  return {
    backend: 'bubblewrap',
    policy,
    account,
    grants,
    tempDir: grants.tempDir,
    writable: writableOf(grants),
    ruleset,
    privateDevpts,
    seccomp: { input, program },
    namespaces: { ipc: false, net: false, user: false },
    steps,
    wrapperSteps,
    viewEpoch: layered?.viewEpoch,
    mounts: layered?.mounts,
    shield: layered?.shield,
    env: layered?.env ?? {},
  }
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
  args.push(...options.ruleset)
  if (s.filter) args.push('--seccomp-hex', s.filter.toString('hex'))
  return args
}
