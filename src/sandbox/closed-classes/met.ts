/**
 * The classes a finished run met that its plan closes whole, each with what the run met and the
 * flags that open it: a class counts only when the plan really closes it
 * (src/sandbox/closed-classes/closing-plan.ts) and the failed run's output says a known tool met
 * it (src/sandbox/closed-classes/messages.ts). Such refusals name no path, so no file denial is
 * claimed for them; this is the fact that takes its place.
 */
import type { ClosedClassFact } from '../../policy/vocabulary.js'
import { type ClosingPlan, closedBy } from './closing-plan.js'
import { messageOf } from './messages.js'

export type { ClosingPlan } from './closing-plan.js'

/** The closed classes `run` met under `plan`: none for a run that exited 0, died of a signal or never ran. */
export function closedClassesMet(
  plan: ClosingPlan,
  run: { exitCode: number | null; stderr: string; stdout?: string | undefined; runnerFailed?: boolean | undefined },
): ClosedClassFact[] {
  if (run.runnerFailed === true || run.exitCode === null || run.exitCode === 0) return []
  const closing = closedBy(plan)
  if (closing.length === 0) return []
  const output = `${run.stderr}\n${run.stdout ?? ''}`
  const met: ClosedClassFact[] = []
  for (const c of closing) {
    const says = messageOf(c.class, output)
    if (says !== undefined) met.push({ class: c.class, evidence: `${says}: ${c.why}`, remedy: c.remedy })
  }
  return met
}
