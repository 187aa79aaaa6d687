/**
 * The Seatbelt backend's plan for one policy and the confined spec it turns a spawn spec into
 * (pure: the profile is rendered from the grants, the argv is `sandbox-exec -p PROFILE -- …`).
 * On macOS `LocalSandbox.confine()` returns this spec; the portable runtime runs it as a direct
 * child (sandbox-exec applies the profile to itself and execs the command in place, so the
 * command leads the run's own session and process group).
 *
 * The account is the policy's promised classes (as every backend counts them) with Seatbelt's
 * verdicts (account.ts): `partial` always, since lifetime (no subreaper on macOS)
 * and process control (renice of the user's other processes) are never governed.
 */
import type { ClassVerdict, EnforcementAccount } from '../../policy/backends.js'
import { InvalidRequestError } from '../../policy/errors.js'
import type { SandboxGrants } from '../../policy/grants.js'
import type { EffectClass, SandboxPolicy } from '../../policy/vocabulary.js'
import { findProgram } from '../../subprocess/program-path.js'
import type { SubprocessSpawnSpec } from '../../subprocess/types.js'
import { promisedClasses } from '../confinement/account.js'
import { renderSeatbeltProfile, type SeatbeltProfile } from './profile.js'
import { seatbeltEnforcement } from './account.js'
import { seatbeltLaunchArgv } from './launch.js'

/** Seatbelt's plan: what the runs' verdicts need (as every plan has) and the rendered profile. */
export interface SeatbeltPlan {
  backend: 'seatbelt'
  policy: SandboxPolicy
  account: EnforcementAccount
  grants: SandboxGrants
  /** The session's private temp dir (TMPDIR), as the host spells it. */
  tempDir: string | undefined
  /** Paths the command may write, spelled as macOS resolves them (for denial facts). */
  writable: string[]
  profile: SeatbeltProfile
  /** The probe's canary proved Seatbelt on this host. */
  verified: boolean
}

/** The account of `profile` for `policy`, in the classes every backend's account uses. */
export function seatbeltAccount(
  policy: SandboxPolicy,
  profile: SeatbeltProfile,
  verified: boolean,
): EnforcementAccount {
  const verdicts = seatbeltEnforcement(profile, { verified })
  const byClass = new Map<string, ClassVerdict>(
    verdicts.classes.map((c) => [c.class, { governed: c.governed, how: c.reason }]),
  )
  const promised = promisedClasses(policy)
  const classes: Partial<Record<EffectClass, ClassVerdict>> = {}
  for (const c of promised) classes[c] = byClass.get(c) ?? { governed: false, how: 'not governed by Seatbelt' }
  const governed = promised.filter((c) => classes[c]?.governed === true)
  const ungoverned = promised.filter((c) => classes[c]?.governed !== true)
  return { enforcement: ungoverned.length === 0 ? 'full' : 'partial', classes, governed, ungoverned }
}

/** The Seatbelt plan for `policy` (its grants already made with the session's temp dir). */
export function seatbeltPlan(
  policy: SandboxPolicy,
  grants: SandboxGrants,
  options: { tempDir?: string | undefined; verified?: boolean | undefined } = {},
): SeatbeltPlan {
  const profile = renderSeatbeltProfile(grants, { tempDir: options.tempDir, network: policy.network })
  const verified = options.verified === true
  const devices = grants.devices.filter((d) => d.access.includes('write')).map((d) => d.path)
  return {
    backend: 'seatbelt',
    policy,
    account: seatbeltAccount(policy, profile, verified),
    grants,
    tempDir: options.tempDir,
    writable: [...profile.writable, ...devices],
    profile,
    verified,
  }
}

/** The Seatbelt-confined spec: sandbox-exec with the profile, then the command (found on the PATH it will see). */
export function seatbeltSpec(spec: SubprocessSpawnSpec, plan: SeatbeltPlan): SubprocessSpawnSpec {
  const { confinement: _ignored, ...rest } = spec
  const env = plan.tempDir === undefined ? rest.env : { ...rest.env, TMPDIR: plan.tempDir }
  // sandbox-exec would search PATH itself; the search happens here, as for every other backend.
  const found = findProgram(spec.argv[0] ?? '', env?.PATH ?? process.env.PATH)
  if ('error' in found) {
    throw new InvalidRequestError([`argv[0]: ${spec.argv[0]} was not found on PATH (${found.error})`], {
      context: 'cannot confine the command under Seatbelt',
    })
  }
  return {
    ...rest,
    ...(env === undefined ? {} : { env }),
    argv: seatbeltLaunchArgv({ profile: plan.profile.profile, command: [found.path, ...spec.argv.slice(1)] }),
    confinement: { backend: 'seatbelt', mode: plan.policy.mode },
  }
}
