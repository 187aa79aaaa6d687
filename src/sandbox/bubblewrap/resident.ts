/**
 * Resident instances: one bwrap per sandbox and plan, started on the first run and kept, whose
 * init is cordon-exec's launcher (`cordon-exec instance`). Each run is then a request, as on the
 * Landlock path: its supervisor was cloned ahead into a pid, mount, IPC (and, with the network
 * denied, network) namespace of its own, mounted its own /proc and devpts, built the write domain
 * and dropped every capability (native/resident.h). bwrap's mounts are made once per instance,
 * so a stale plan (a new read view, protected set or writable inode: src/sandbox/session.ts) gets a new
 * instance and the old one ends once its runs have.
 */
import { networkOf, PROXY_PORT } from '../../policy/defaults.js'
import { allowListOf, cutsNetwork } from '../../policy/vocabulary.js'
import { retireResident } from '../../subprocess/launcher/launch.js'
import type { ResidentInstance } from '../../subprocess/types.js'
import type { ConfinementPlan } from '../confinement/plan.js'
import { bubblewrapArgv } from './argv.js'
import { rulesetArgsFor } from './plan.js'

const keys = new WeakMap<ConfinementPlan, string>()
/** Each plan's instance argv, once per bwrap and helper. */
const argvs = new WeakMap<ConfinementPlan, { tools: string; argv: string[] }>()
let made = 0

/** The name of `plan`'s instance (one per plan object: two sandboxes never share one). */
function keyOf(plan: ConfinementPlan): string {
  let key = keys.get(plan)
  if (key === undefined) {
    key = `resident-${process.pid}-${++made}`
    keys.set(plan, key)
  }
  return key
}

/** What each run's supervisor applies to itself, as `cordon-exec instance` options. */
function templateArgs(plan: ConfinementPlan): string[] {
  const s = plan.steps
  const args = ['--cap-last', String(s.capLast), '--no-new-privs']
  if (cutsNetwork(plan.policy.network)) args.push('--unshare-net')
  if (allowListOf(plan.policy.network)) args.push('--proxy-listener', String(PROXY_PORT))
  args.push(...rulesetArgsFor(plan, undefined))
  if (s.filter) args.push('--seccomp-hex', s.filter.toString('hex'))
  return args
}

/**
 * Whether `plan` can run in an instance: bwrap not setuid (it keeps no capability for an init
 * then). A setuid bwrap gets no no_new_privs of ours (src/sandbox/bubblewrap/plan.ts), run as its
 * owner or not.
 */
export function residentEligible(plan: ConfinementPlan): boolean {
  return plan.wrapperSteps?.noNewPrivs === true
}

/** The instance of `plan` and the request for one command in it (`path`: the command, found on its PATH). */
export function residentInstance(
  plan: ConfinementPlan,
  tools: { bwrap: string; helper: string },
  command: { path: string; argv: readonly string[] },
): ResidentInstance {
  const toolKey = `${tools.bwrap}\0${tools.helper}`
  let built = argvs.get(plan)
  if (built === undefined || built.tools !== toolKey) {
    const argv = bubblewrapArgv(plan.grants, {
      bwrapPath: tools.bwrap,
      network: networkOf(plan.policy),
      command: [tools.helper, 'instance', '--control-fd', '3', ...templateArgs(plan)],
      mounts: plan.mounts,
      resident: true,
    })
    built = { tools: toolKey, argv }
    argvs.set(plan, built)
  }
  const argv = built.argv
  const s = plan.steps
  return {
    key: keyOf(plan),
    argv,
    wrapperSteps: plan.wrapperSteps,
    command,
    // The supervisor holds no_new_privs and the program already; the command empties its sets.
    steps: { dropCaps: true, dropBounding: false, capLast: s.capLast, noNewPrivs: false, rlimits: s.rlimits },
    ...(allowListOf(plan.policy.network) ? { proxyPort: PROXY_PORT } : {}),
  }
}

/** Ends `plan`'s instance once its runs have (nothing when it has none). */
export function releaseResident(plan: ConfinementPlan): void {
  const key = keys.get(plan)
  if (key !== undefined) retireResident(key)
}
