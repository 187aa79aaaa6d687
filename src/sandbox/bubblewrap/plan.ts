/**
 * The bubblewrap backend's plan: bwrap's mounts and namespaces, and inside them cordon-exec as the
 * command's init, which applies a Landlock domain that handles only writes (for what a read-only
 * bind cannot refuse: existing FIFOs and sockets, reopens through /proc/self/fd) and the seccomp
 * program. The bwrap argv itself is built per spec (spec.ts).
 */
import { CONFINED_OOM_SCORE_ADJ } from '../../policy/defaults.js'
import { cutsNetwork, networkModeOf } from '../../policy/vocabulary.js'
import { GRANT_TABLE, type SandboxGrants } from '../../policy/grants.js'
import type { SandboxPolicy } from '../../policy/vocabulary.js'
import type { RulesetReference } from '../../subprocess/types.js'
import type { ShieldFacts } from '../confinement/account.js'
import { NO_HOST_BOUNDS, subprocessBounds } from '../confinement/bounds.js'
import { type ConfinementPlan, commandSteps, type PlanHost, writableOf } from '../confinement/plan.js'
import {
  handledFsFor,
  planRuleset,
  rulesetArgs,
  type RulesetEntry,
  rightsFor,
  scopedFor,
  WRITE_RIGHTS,
} from '../ruleset/landlock.js'
import { bubblewrapLauncherProgram, type SeccompInput, seccompProgramFor } from '../seccomp/rules.js'
import type { BubblewrapMounts } from '../view/mounts.js'
import { bubblewrapAccount } from './account.js'
import { WRAPPED_FDS } from './argv.js'

/** The rules of the write domain inside bwrap (and, with the read view inside, of its reads). */
function insideEntries(
  grants: SandboxGrants,
  reads: readonly RulesetEntry[] | undefined,
  shm: string | undefined,
): RulesetEntry[] {
  return [
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
}

/** bwrap's own steps: no_new_privs and the launcher program, unless bwrap is setuid (it could not gain its privileges). */
function wrapperStepsFor(host: PlanHost, setuid: boolean): ConfinementPlan['wrapperSteps'] {
  if (setuid) return undefined
  return {
    dropCaps: false,
    dropBounding: false,
    capLast: host.capLast,
    noNewPrivs: true,
    filter: host.seccomp ? bubblewrapLauncherProgram(host.arch) : undefined,
    // Raised in bwrap's clone child, on the host's /proc (the sandbox's is read-only): all inside inherit it.
    oomScoreAdj: CONFINED_OOM_SCORE_ADJ,
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
  const deny = cutsNetwork(policy.network)
  const reads = layered?.readEntries
  const entries = insideEntries(grants, reads, layered?.mounts.shm)
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
    network: networkModeOf(policy.network),
    privateIpc: true,
    privateNet: deny,
    privateDevpts: true,
    // `--ro-bind / /` with only the writable set bound read-write, and the host's device nodes
    // sealed read-only by the init (src/sandbox/bubblewrap/argv.ts): chmod, utime and xattrs fail
    // EROFS outside the writable set, so read-only keeps them in its TMPDIR (unpacking, cp -a).
    metadataByMounts: true,
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
      bounds: host.bounds,
    },
    { ...policy, shield: layered?.shield },
  )
  // Inside bwrap (--cap-drop ALL) nothing can drop a bounding set: capset and no_new_privs only.
  const steps = { ...commandSteps(host, policy, program), dropBounding: false }
  const wrapperSteps = wrapperStepsFor(host, wrapper.setuid)
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
    bounds: subprocessBounds(policy.limits, host.bounds ?? NO_HOST_BOUNDS),
  }
}

/**
 * How cordon-exec inside bwrap gets the write domain: the host-built ruleset's fd, or the plan's
 * rules (no addon: the portable spawn path; or a rule on the sandbox's own /dev/pts, which only
 * exists inside), each checked against the inode it was planned for.
 */
export function rulesetArgsFor(plan: ConfinementPlan, ruleset: RulesetReference | undefined): string[] {
  if (plan.ruleset === undefined) return []
  if (ruleset !== undefined && plan.privateDevpts === undefined) return ['--ruleset-fd', String(WRAPPED_FDS.ruleset)]
  const devpts = plan.privateDevpts
  return [
    ...rulesetArgs(plan.ruleset),
    ...(devpts && devpts.allowed !== 0 ? ['--rule-devpts', `${devpts.allowed.toString(16)}:${devpts.hostDev}`] : []),
  ]
}

/**
 * Whether a per-run bwrap of `plan` keeps the capabilities its init needs to seal the host's device
 * binds (src/sandbox/bubblewrap/argv.ts): always but for a setuid bwrap started by another user than
 * root, which refuses --cap-add (its sandbox's uid is that user's, which owns none of the nodes).
 */
export function sealsDevices(plan: ConfinementPlan, hostUid: number | undefined = process.getuid?.()): boolean {
  return plan.wrapperSteps !== undefined || (hostUid === 0 && plan.runAs === undefined)
}
