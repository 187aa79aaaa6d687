/**
 * What `cordon explain --backend seatbelt` shows, on any platform: the exact profile Seatbelt
 * would apply to a policy, the launch argv, and the enforcement account. Nothing runs.
 */
import { InvalidRequestError } from '../../policy/errors.js'
import { grantsFor } from '../../policy/grants.js'
import type { SandboxExecutionPolicy } from '../../policy/vocabulary.js'
import { renderSeatbeltProfile, type SeatbeltProfile, type SeatbeltProfileOptions } from './profile.js'
import { seatbeltEnforcement, type SeatbeltEnforcementAccount } from './account.js'
import { seatbeltLaunchArgv } from './launch.js'

/** Options for explainSeatbelt: the profile's options, the launch's command, and what the probe knows. */
export interface SeatbeltExplainOptions extends SeatbeltProfileOptions {
  /** The command shown in the launch argv; default `['/bin/sh', '-c', '<command>']`. */
  command?: readonly string[] | undefined
  /** The probe proved Seatbelt on this host (default false: unverified). */
  verified?: boolean | undefined
}

/** Everything explain reports for Seatbelt, as one JSON-able object. */
export interface SeatbeltExplanation {
  backend: 'seatbelt'
  /** The rendered SBPL, exactly as `sandbox-exec -p` receives it. */
  profile: string
  /** The launch argv (the profile stands in as `<profile>`, it is printed above). */
  argv: string[]
  /** The facts the profile was rendered from (canonical paths, mach services). */
  rendered: Omit<SeatbeltProfile, 'profile'>
  account: SeatbeltEnforcementAccount
}

/** The Seatbelt profile for `policy`, its launch argv and its enforcement account; throws InvalidRequestError. */
export function explainSeatbelt(
  policy: SandboxExecutionPolicy,
  options: SeatbeltExplainOptions = {},
): SeatbeltExplanation {
  if (policy.mode === 'danger-full-access') {
    throw new InvalidRequestError(['mode: danger-full-access never asks Seatbelt: the command runs unconfined'], {
      context: 'nothing to explain for Seatbelt',
    })
  }
  const { command, verified, ...profileOptions } = options
  const grants = grantsFor(policy, { tempDir: options.tempDir })
  const rendered = renderSeatbeltProfile(grants, profileOptions)
  const argv = seatbeltLaunchArgv({ profile: rendered.profile, command: command ?? ['/bin/sh', '-c', '<command>'] })
  argv[2] = '<profile>'
  const { profile, ...facts } = rendered
  return {
    backend: 'seatbelt',
    profile,
    argv,
    rendered: facts,
    account: seatbeltEnforcement(rendered, { verified }),
  }
}
