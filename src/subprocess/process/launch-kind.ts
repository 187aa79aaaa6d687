/**
 * How one spec is started, decided from the spec alone:
 *
 * - `direct`: the native clone child execs the program itself (an unconfined, unsupervised run:
 *   the fastest path); the tree is the child's process group.
 * - `launched`: the launcher forks a supervisor that forks the command (every `landlock` run, and
 *   every supervised run): the supervisor is a subreaper outside the sandbox, so the tree is
 *   everything below it, including descendants that left the group.
 * - `wrapped`: the program is a wrapper that runs cordon-exec as the command's supervisor inside
 *   (bubblewrap): the wrapper's own exit means the sandbox, and the tree, are gone.
 * - `resident`: a `launched` run whose launcher is a resident bubblewrap instance's init (a spawn
 *   path without the native launcher runs such a spec `wrapped`).
 */
import { SpawnError } from '../../policy/errors.js'
import type { ConfinementSteps, RulesetReference, SubprocessSpawnSpec } from '../types.js'

/** One of the four ways a spec starts. */
export type LaunchKind = 'direct' | 'launched' | 'wrapped' | 'resident'

/** How `spec` is started. */
export function launchKindOf(spec: SubprocessSpawnSpec): LaunchKind {
  const backend = spec.confinement?.backend
  if (backend === 'bubblewrap') return spec.confinement?.resident ? 'resident' : 'wrapped'
  if (backend === 'landlock' || spec.supervise === true) return 'launched'
  return 'direct'
}

/** The ruleset's fd, or a SpawnError at `landlock` when the sandbox already closed it (fail closed). */
export function openRuleset(ruleset: RulesetReference | undefined): number | undefined {
  if (ruleset === undefined) return undefined
  if (ruleset.closed) {
    throw new SpawnError({
      stage: 'landlock',
      errno: 9, // EBADF
      detail: "the spec's Landlock ruleset was closed by its sandbox (disposed): nothing was run",
    })
  }
  return ruleset.fd
}

/** Steps as the native direct spawn takes them (the ruleset by fd, checked open). */
export function nativePlanOf(steps: ConfinementSteps | undefined) {
  if (steps === undefined) return undefined
  const { ruleset, ...rest } = steps
  return { ...rest, rulesetFd: openRuleset(ruleset) }
}
