/** A Linux plan with its command running as the workspace owner (Landlock: the command; bubblewrap: bwrap itself). */
import type { ConfinementPlan } from './plan.js'
import type { RunAsOwner } from './request.js'

/** The plan's command steps with the owner's credentials. */
export function commandAsOwner(plan: ConfinementPlan, runAs: RunAsOwner): ConfinementPlan {
  return { ...plan, runAs, steps: { ...plan.steps, credentials: { uid: runAs.uid, gid: runAs.gid } } }
}

/** The plan's wrapper (bwrap) started as the owner. */
export function wrapperAsOwner(plan: ConfinementPlan, runAs: RunAsOwner): ConfinementPlan {
  const wrapper = plan.wrapperSteps ?? {
    dropCaps: false,
    dropBounding: false,
    capLast: plan.steps.capLast,
    noNewPrivs: false,
  }
  return { ...plan, runAs, wrapperSteps: { ...wrapper, credentials: { uid: runAs.uid, gid: runAs.gid } } }
}
