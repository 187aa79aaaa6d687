/**
 * The workload corpus: every case test/workloads/workloads.test.ts runs, by round (the case's
 * shape and placeholders: test/workloads/case.ts).
 */
import type { WorkloadCase } from './case.js'
import { DENIALS } from './cases/denials.js'
import { FIRST_ROUND } from './cases/first-round.js'

export type { Compared, Expected, Tool, WorkloadCase } from './case.js'

/** The corpus. */
export const WORKLOADS: readonly WorkloadCase[] = [...FIRST_ROUND, ...DENIALS]
