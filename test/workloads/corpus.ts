/**
 * The workload corpus: every case test/workloads/workloads.test.ts runs, by round (the case's
 * shape and placeholders: test/workloads/case.ts).
 */
import type { WorkloadCase } from './case.js'
import { EXIT_FACTS } from './cases/exit-facts.js'
import { DENIALS } from './cases/denials.js'
import { FIRST_ROUND } from './cases/first-round.js'
import { READ_ONLY_UNPACK } from './cases/read-only-unpack.js'
import { REMEDIES } from './cases/remedies.js'
import { SESSION_ENV } from './cases/session-env.js'

export type { Compared, Expected, Tool, WorkloadCase } from './case.js'

/** The corpus. */
export const WORKLOADS: readonly WorkloadCase[] = [
  ...FIRST_ROUND,
  ...EXIT_FACTS,
  ...READ_ONLY_UNPACK,
  ...SESSION_ENV,
  ...DENIALS,
  ...REMEDIES,
]
