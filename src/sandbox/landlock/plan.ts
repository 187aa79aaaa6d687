/**
 * The Landlock backend's plan: the command runs below a supervisor outside the sandbox and
 * applies, in order, RLIMIT_CORE 0 and the policy's limits, an empty capability set,
 * no_new_privs, one Landlock domain (the read view, the writable grants, the devices; TCP when
 * denied without a private network; both scopes) and the seccomp program, inside the private
 * namespaces the supervisor entered (IPC as root; IPC and network, through a user namespace, for
 * a denied network).
 */
import { cutsNetwork, networkModeOf } from '../../policy/vocabulary.js'
import type { SandboxGrants } from '../../policy/grants.js'
import type { SandboxPolicy } from '../../policy/vocabulary.js'
import type { ShieldFacts } from '../confinement/account.js'
import { NO_HOST_BOUNDS, subprocessBounds } from '../confinement/bounds.js'
import { type ConfinementPlan, commandSteps, type PlanHost, writableOf } from '../confinement/plan.js'
import {
  handledFsFor,
  handledNetFor,
  planRuleset,
  type RulesetEntry,
  rightsFor,
  scopedFor,
} from '../ruleset/landlock.js'
import { type SeccompInput, seccompProgramFor } from '../seccomp/rules.js'
import type { ReadViewSnapshot } from '../view/read-view.js'
import { landlockAccount } from './account.js'

/**
 * The namespaces the supervisor enters for a run. Root gets a private IPC namespace always (it is
 * free); through a user namespace (which shows files of unmapped owners as nobody) only when the
 * network is denied or a read-only view is made. Root can give the launcher a mount namespace of
 * its own, where /proc/keys reads empty (`keys`). A read-only run gets a read-only view of the host
 * but for its writable grants (`view`, parents first; never a device, which a bind would open to
 * chmod): chmod and utime then work in its TMPDIR and fail EROFS elsewhere.
 */
function namespacesFor(
  host: PlanHost,
  deny: boolean,
  view: readonly string[] | undefined,
): ConfinementPlan['namespaces'] & { keys: boolean } {
  const ns = host.namespaces
  const net = deny && ns.available
  const ipc = ns.available && (!ns.viaUserNamespace || net)
  const withView = ns.available && view !== undefined
  return {
    ipc,
    net,
    user: ns.viaUserNamespace && (ipc || net || withView),
    keys: ns.available && !ns.viaUserNamespace,
    ...(withView ? { view } : {}),
  }
}

/** The writable grants a read-only view keeps read-write, parents before children. */
function viewOf(grants: SandboxGrants): string[] {
  return [...new Set(grants.writable.map((w) => w.path))].sort(
    (a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b),
  )
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
  const namespaces = namespacesFor(
    host,
    cutsNetwork(policy.network),
    policy.mode === 'read-only' ? viewOf(grants) : undefined,
  )
  const { ipc: privateIpc, net: privateNet, keys: maskKeys } = namespaces
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
          handledNet: handledNetFor(host.abi, networkModeOf(policy.network), privateNet),
          scoped: scopedFor(host.abi),
        })
      : undefined
  const input: SeccompInput = {
    arch: host.arch,
    mode: policy.mode,
    network: networkModeOf(policy.network),
    privateIpc,
    privateNet,
    // Where `full` is promised, no watch may see into the hidden places (Landlock does not govern
    // watches); workspace-write keeps them for file watchers and its account says so.
    refuseWatches: policy.mode === 'read-only',
    metadataByMounts: namespaces.view !== undefined,
  }
  const program = host.seccomp ? seccompProgramFor(input) : undefined
  const account = landlockAccount(
    {
      abi: host.abi,
      seccomp: host.seccomp,
      supervisor: host.supervisor,
      namespaces: { ipc: privateIpc, net: privateNet, keys: maskKeys, view: namespaces.view !== undefined },
      uid0: host.uid === 0,
      bounds: host.bounds,
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
    bounds: subprocessBounds(policy.limits, host.bounds ?? NO_HOST_BOUNDS),
  }
}
