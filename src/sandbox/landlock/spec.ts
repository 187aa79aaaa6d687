/**
 * The Landlock-confined spec: the spec keeps its argv and carries the command's steps and
 * namespaces, which the runtime hands to the launcher (pure: the ruleset is already built).
 */
import type { RulesetReference, SubprocessSpawnSpec } from '../../subprocess/types.js'
import type { ConfinementPlan } from '../confinement/plan.js'
import { bareSpec } from '../confinement/spec.js'

/** The Landlock-confined spec. */
export function landlockSpec(
  spec: SubprocessSpawnSpec,
  plan: ConfinementPlan,
  ruleset: RulesetReference | undefined,
): SubprocessSpawnSpec {
  return {
    ...bareSpec(spec, plan),
    confinement: {
      backend: 'landlock',
      mode: plan.policy.mode,
      // Landlock cannot hold a missing protected path away; one the run makes is taken away after it.
      ...(plan.shield?.mustNotAppear ? { mustNotAppear: plan.shield.mustNotAppear } : {}),
      // A symlink on the way to a protected path the run changed is made again after it.
      ...(plan.shield?.mustStay ? { mustStay: plan.shield.mustStay } : {}),
      steps: { ...plan.steps, ruleset },
      namespaces: plan.namespaces,
      bounds: plan.bounds,
    },
  }
}
