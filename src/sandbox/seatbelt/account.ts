/**
 * Seatbelt's enforcement, told truthfully: for one rendered profile, which effect classes the
 * SBPL governs, which it cannot, and why. `full` needs every promised class; Seatbelt never has
 * `lifetime` (macOS has no subreaper and no pid namespace) nor `resources` (no limits in SBPL),
 * so it is `partial` in every mode, with the classes named.
 *
 * The classes are those of the layered-confinement issue (content, names, metadata, network,
 * processes, ipc, keyrings, terminals, lifetime, resources). The vocabulary in
 * `policy/vocabulary.ts` still has the older five (`signals` for processes); the
 * `seatbeltEffectClasses` mapping gives the account in those words until it grows.
 */
import {
  type ConfinedSandboxMode,
  EFFECT_CLASSES,
  type EffectClass,
  type NetworkPolicy,
  type SandboxEnforcement,
} from '../../policy/vocabulary.js'
import type { SeatbeltProfile } from './profile.js'
import { isKeychainService } from './mach-services.js'

/**
 * The classes a Seatbelt account lists: the vocabulary's, less `signals` (the alias of
 * `processes`), the path classes the plan promises only when it hides or protects something, and
 * the limit classes (`resources` says SBPL has none).
 */
export const SEATBELT_EFFECT_CLASSES = EFFECT_CLASSES.filter(
  (c): c is Exclude<EffectClass, 'signals' | 'secrets' | 'protected' | 'memory' | 'temp' | 'cpu'> =>
    c !== 'signals' && c !== 'secrets' && c !== 'protected' && c !== 'memory' && c !== 'temp' && c !== 'cpu',
)

/** One effect class. */
export type SeatbeltEffectClass = (typeof SEATBELT_EFFECT_CLASSES)[number]

/** One class: whether the policy promises it, whether the profile governs it, and how or why not. */
export interface SeatbeltClassVerdict {
  class: SeatbeltEffectClass
  /** Every class is promised but `network` under `network: 'inherit'`. */
  promised: boolean
  governed: boolean
  /** The SBPL that governs it, or why Seatbelt cannot. */
  reason: string
}

/** Seatbelt's account for one profile. */
export interface SeatbeltEnforcementAccount {
  backend: 'seatbelt'
  mode: ConfinedSandboxMode
  network: NetworkPolicy
  /** `full` iff every promised class is governed: never, for Seatbelt. */
  enforcement: SandboxEnforcement
  /** The probe's canary has proved this backend on this host (until then nothing here is measured). */
  verified: boolean
  governed: SeatbeltEffectClass[]
  /** Promised classes that are not governed (empty iff `full`). */
  ungoverned: SeatbeltEffectClass[]
  classes: SeatbeltClassVerdict[]
  /** What the profile does not govern, or refuses beyond the policy, in words a person can act on. */
  limitations: string[]
}

/** Facts from the host, when known. */
export interface SeatbeltHostFacts {
  /** The probe's canary ran under sandbox-exec on this host and was refused what it must be. */
  verified?: boolean | undefined
}

/** The account of `profile`: per class governed or not, with the reason, and the verdict. */
export function seatbeltEnforcement(
  profile: SeatbeltProfile,
  facts: SeatbeltHostFacts = {},
): SeatbeltEnforcementAccount {
  const keychain = profile.machServices.filter(isKeychainService)
  const deny = profile.network === 'deny'
  const verdict = (cls: SeatbeltEffectClass, governed: boolean, reason: string): SeatbeltClassVerdict => ({
    class: cls,
    promised: cls !== 'network' || deny,
    governed,
    reason,
  })
  const classes: SeatbeltClassVerdict[] = [
    verdict(
      'content',
      true,
      'file-write* is allowed only under the writable dirs, minus the protected and hidden paths (require-not); every other write or truncation falls to (deny default)',
    ),
    verdict(
      'names',
      true,
      'create, remove and rename (file-write-create, file-write-unlink) only under the writable dirs; file-link and file-clone never; the writable dirs and the ancestors of protected or hidden paths inside them cannot be removed or renamed (a final deny of file-write-unlink)',
    ),
    verdict(
      'metadata',
      true,
      'chmod, chown, utimes, flags and xattrs are file-write-mode/-owner/-times/-flags/-xattr, parts of file-write*: allowed only under the writable dirs; file-ioctl only on the named devices',
    ),
    deny
      ? verdict(
          'network',
          true,
          'no network* or system-socket rule: every socket operation is refused, loopback and unix sockets included, and the mach services that carry network traffic are left out of the allow-list',
        )
      : verdict('network', false, 'network: inherit asks for no confinement: the host network stays reachable'),
    verdict(
      'processes',
      false,
      'signals and process-info reach only processes of the same sandbox and task ports are refused, but no Seatbelt operation is known to refuse setpriority(2) (renice) of another process of the same user',
    ),
    profile.posixSemaphores
      ? verdict(
          'ipc',
          false,
          'POSIX semaphores are allowed (asked for): they live in a host-wide namespace, so a command can open, post and unlink a host semaphore by name',
        )
      : verdict(
          'ipc',
          true,
          `no ipc-sysv* or ipc-posix* rule: host SysV objects, POSIX semaphores and shared memory are refused; mach-lookup reaches only ${profile.machServices.length === 0 ? 'no service' : profile.machServices.join(', ')}`,
        ),
    keychain.length === 0
      ? verdict(
          'keyrings',
          true,
          'macOS has no kernel keyrings; its keychain is reached only through securityd mach services, which the allow-list leaves out',
        )
      : verdict(
          'keyrings',
          false,
          `the mach allow-list includes ${keychain.join(', ')}: the command can ask securityd for keychain items of the user's session`,
        ),
    verdict(
      'terminals',
      true,
      `other terminals (/dev/ttys*) cannot be opened; only /dev/tty${profile.tty === undefined ? '' : `, the command's own ${profile.tty}`} and the ptys it opens itself (the sandbox's pty extension)`,
    ),
    verdict(
      'lifetime',
      false,
      'macOS has no subreaper and no pid namespace: a descendant that leaves the process group (setsid, double fork) outlives the run, still under this profile but running and writing in the roots',
    ),
    verdict(
      'resources',
      false,
      'SBPL has no resource limits: processes, memory, file sizes and disk use through the roots are left to the runner (rlimits)',
    ),
  ]
  const governed = classes.filter((c) => c.governed).map((c) => c.class)
  const ungoverned = classes.filter((c) => c.promised && !c.governed).map((c) => c.class)
  return {
    backend: 'seatbelt',
    mode: profile.mode,
    network: profile.network,
    enforcement: ungoverned.length === 0 ? 'full' : 'partial',
    verified: facts.verified ?? false,
    governed,
    ungoverned,
    classes,
    limitations: limitations(profile, facts.verified ?? false),
  }
}

function limitations(profile: SeatbeltProfile, verified: boolean): string[] {
  const out: string[] = []
  if (!verified) {
    out.push(
      'unverified: this profile was rendered and checked structurally, never enforced by sandbox-exec here (the probe proves it on a Mac with a canary)',
    )
  }
  if (profile.network === 'deny') {
    out.push(
      'network: deny also refuses loopback (Seatbelt cannot give a command a private loopback): dev and test servers on 127.0.0.1 fail',
    )
  } else {
    out.push('network: inherit leaves unix sockets of host daemons (docker.sock, ssh-agent) reachable')
  }
  out.push(
    'a protected or hidden path whose ancestor inside a writable root does not exist yet can be planted by renaming or symlinking a prepared dir to that ancestor (Seatbelt checks a rename by its destination name); existing ancestors are guarded',
    'paths match by their bytes: on a case- or normalization-insensitive volume (the APFS default) a protected or hidden path that does not exist yet can be created under another spelling',
    "a hidden path's name stays visible in its parent's listing (its content, metadata and xattrs are refused)",
    'hard links are refused everywhere (file-link), also inside the roots; renaming a file that has several links may be refused too',
    'sysctl reads stay open: kern.procargs2 shows the arguments of other processes of the user',
    'the Darwin per-user temp and cache dirs (/private/var/folders/…, ~/Library/Caches) are not writable: tools that ignore TMPDIR fail there',
    'descriptors the caller passes in (inherited stdio) are not Seatbelt checks: writes through them are the runner’s to govern',
  )
  if (profile.droppedMachServices.length > 0) {
    out.push(`left out of the mach allow-list under network: deny: ${profile.droppedMachServices.join(', ')}`)
  }
  return out
}

/**
 * The account in the vocabulary's current words (`EffectClass`): content, names, metadata,
 * network where governed, and `signals`, which Seatbelt holds (same-sandbox only) even though
 * the wider `processes` class is not.
 */
export function seatbeltEffectClasses(account: SeatbeltEnforcementAccount): EffectClass[] {
  const classes: EffectClass[] = []
  for (const c of ['content', 'names', 'metadata', 'network'] as const) {
    if (account.governed.includes(c)) classes.push(c)
  }
  classes.push('signals')
  return classes
}
