/**
 * Enforcement, told truthfully: which effect classes a backend governs for a mode and network
 * policy, and whether that is every class the policy promises (`full`) or only some (`partial`).
 *
 * Landlock + seccomp: content (write, truncate, device ioctl) needs ABI 5, names (create, remove,
 * rename and link across directories) ABI 2, metadata only in `read-only` and only with the
 * seccomp filter (Landlock does not govern chmod/chown/utime/xattr, and `workspace-write` cannot
 * refuse them outside the root while allowing them inside), network needs the seccomp socket
 * filter (Landlock itself covers TCP only, from ABI 4), signals need ABI 6.
 */
import type { ConfinedSandboxMode, EffectClass, NetworkPolicy, SandboxEnforcement } from '../policy/vocabulary.js'
import { landlockGoverns, promisedClasses } from './landlock.js'

/** What the Landlock backend could set up on this host (from the probe). */
export interface LandlockHostFacts {
  abi: number
  /** The seccomp filter loads (metadata and socket refusals are available). */
  seccomp: boolean
}

/** The classes governed, and the verdict, for one mode and network policy. */
export interface EnforcementAccount {
  enforcement: SandboxEnforcement
  governed: EffectClass[]
  /** Promised classes that are not governed (empty iff `full`). */
  ungoverned: EffectClass[]
}

/** The effect classes Landlock (+ seccomp) governs for `mode` on a host with `facts`. */
export function landlockGovernedClasses(facts: LandlockHostFacts, mode: ConfinedSandboxMode): EffectClass[] {
  const ll = landlockGoverns(facts.abi)
  const classes: EffectClass[] = []
  if (ll.content) classes.push('content')
  if (ll.names) classes.push('names')
  if (mode === 'read-only' && facts.seccomp) classes.push('metadata')
  if (facts.seccomp) classes.push('network')
  if (ll.signals) classes.push('signals')
  return classes
}

/** `full` iff every class the policy promises is governed; never `full` otherwise. */
export function landlockEnforcement(
  facts: LandlockHostFacts,
  mode: ConfinedSandboxMode,
  network: NetworkPolicy,
): EnforcementAccount {
  const governed = landlockGovernedClasses(facts, mode)
  const ungoverned = promisedClasses(network).filter((c) => !governed.includes(c))
  return { enforcement: ungoverned.length === 0 ? 'full' : 'partial', governed, ungoverned }
}

/**
 * The effect classes bubblewrap governs, for either confined mode: content, names and metadata
 * outside the writable binds (a read-only bind refuses all three with EROFS, chmod and utime
 * included, while they stay allowed inside the roots), network (`--unshare-net` when denied),
 * and signals (`--unshare-pid`: host processes cannot be named, so they cannot be signalled).
 */
export function bubblewrapGovernedClasses(): EffectClass[] {
  return ['content', 'names', 'metadata', 'network', 'signals']
}

/** bubblewrap's account for a mode and network policy: `full`, as every promised class is governed. */
export function bubblewrapEnforcement(network: NetworkPolicy): EnforcementAccount {
  const governed = bubblewrapGovernedClasses()
  const ungoverned = promisedClasses(network).filter((c) => !governed.includes(c))
  return { enforcement: ungoverned.length === 0 ? 'full' : 'partial', governed, ungoverned }
}
