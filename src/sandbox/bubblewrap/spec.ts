/**
 * The bubblewrap-confined spec: the argv becomes the bwrap argv around cordon-exec init around
 * the command (pure: the ruleset is already built).
 */
import { networkOf } from '../../policy/defaults.js'
import { allowListOf } from '../../policy/vocabulary.js'
import { InvalidRequestError } from '../../policy/errors.js'
import { findProgram } from '../../subprocess/program-path.js'
import type { RulesetReference, SubprocessSpawnSpec } from '../../subprocess/types.js'
import { type ConfinementPlan, initArgs } from '../confinement/plan.js'
import { bareSpec } from '../confinement/spec.js'
import { bubblewrapArgv, WRAPPED_FDS, wrappedProxyFd } from './argv.js'
import { rulesetArgsFor, sealsDevices } from './plan.js'
import { residentEligible, residentInstance } from './resident.js'

/** The bubblewrap-confined spec: bwrap, then cordon-exec init inside, then the command. */
export function bubblewrapSpec(
  spec: SubprocessSpawnSpec,
  plan: ConfinementPlan,
  ruleset: RulesetReference | undefined,
  tools: { bwrap: string; helper: string; terminal?: boolean; resident?: boolean },
): SubprocessSpawnSpec {
  const base = bareSpec(spec, plan)
  // cordon-exec execs a path: the PATH search happens here, on the PATH the command will see.
  const found = findProgram(spec.argv[0] ?? '', base.env?.PATH ?? process.env.PATH)
  if ('error' in found) {
    throw new InvalidRequestError([`argv[0]: ${spec.argv[0]} was not found on PATH (${found.error})`], {
      context: 'cannot confine the command under bubblewrap',
    })
  }
  const proxyFd = wrappedProxyFd(plan.privateDevpts === undefined && ruleset !== undefined)
  // The run's cgroup.procs fds follow the proxy's socket (src/subprocess/process/wrapped.ts); a terminal gets none.
  const cgroupFdFrom = tools.terminal ? undefined : proxyFd + (allowListOf(plan.policy.network) ? 1 : 0)
  const inner = [
    tools.helper,
    ...initArgs(plan, {
      statusFd: WRAPPED_FDS.status,
      graceMs: spec.graceMs,
      background: spec.supervise === true,
      terminal: tools.terminal,
      ruleset: rulesetArgsFor(plan, ruleset),
      proxyFd,
      cgroupFdFrom,
    }),
    '--',
    found.path,
    ...spec.argv.slice(1),
  ]
  const argv = bubblewrapArgv(plan.grants, {
    bwrapPath: tools.bwrap,
    network: networkOf(plan.policy),
    tempDir: plan.tempDir,
    cwd: spec.cwd,
    command: inner,
    terminal: tools.terminal,
    mounts: plan.mounts,
    sealDevices: sealsDevices(plan),
  })
  return {
    ...base,
    argv,
    confinement: {
      backend: 'bubblewrap',
      mode: plan.policy.mode,
      ...(plan.mounts?.protected.mustNotAppear ? { mustNotAppear: plan.mounts.protected.mustNotAppear } : {}),
      ...(plan.mounts?.protected.mustStay ? { mustStay: plan.mounts.protected.mustStay } : {}),
      steps: plan.wrapperSteps,
      ...(tools.terminal ? {} : { bounds: plan.bounds }),
      // The domain comes as rules when it has an inside-only rule (the private /dev/pts).
      wrapper: { ruleset: plan.privateDevpts ? undefined : ruleset },
      // A terminal runs under node-pty, never through the launcher.
      ...(tools.resident !== false && tools.terminal !== true && residentEligible(plan)
        ? { resident: residentInstance(plan, tools, { path: found.path, argv: spec.argv }) }
        : {}),
    },
  }
}
