/**
 * The zod schemas of the tools' arguments, exported so a harness can validate or derive types
 * from them; the JSON Schema a model is offered is made from them (tool-schema.ts). An optional
 * argument is `.nullish()`: a strict caller sends `null` for one it omits.
 */
import type { z as Z } from 'zod'
import { MAX_JOB_WAIT_MS } from '../policy/defaults.js'
import { zod } from '../policy/schema/zod-on-demand.js'
import { ESCALATION_TARGETS } from '../policy/widen.js'

const { z } = zod()

/** A string a process can be given: execve ends one at a NUL byte, so none may hold one. */
const noNul = (s: string) => !s.includes('\0')
const NUL_MESSAGE = 'must not contain a NUL byte'

const BASE_ARGS = {
  command: z
    .string()
    .min(1)
    .refine(noNul, NUL_MESSAGE)
    .describe('The bash command to run (bash -c, a fresh non-interactive shell each call).'),
  workdir: z
    .string()
    .refine(noNul, NUL_MESSAGE)
    .nullish()
    .describe('Working directory; a relative path resolves against the workspace root. Default: the workspace root.'),
  timeout_ms: z
    .number()
    .positive()
    .nullish()
    .describe('Timeout in milliseconds, a positive number (the harness caps it). Not applied to background jobs.'),
  run_in_background: z
    .boolean()
    .nullish()
    .describe(
      'true: start the command as a background job and return its job id at once (no timeout applies); read its output with job_output, stop it with job_kill.',
    ),
}
const ESCALATION_ARGS = {
  sandbox_permissions: z
    .enum(ESCALATION_TARGETS)
    .nullish()
    .describe(
      'Only after a sandbox denial: retry the exact same command once with this wider mode (the narrowest that suffices); the user is asked to approve.',
    ),
  additional_hosts: z
    .array(z.string())
    .nullish()
    .describe(
      'Only after the network allow-list refused a host: retry the exact same command once with these hosts added to it (a name, *.domain or an IP address, each with an optional :port; only the hosts it needs); the user is asked to approve. A host in the deny list stays refused.',
    ),
  justification: z
    .string()
    .nullish()
    .describe(
      'With sandbox_permissions or additional_hosts: one sentence telling the user why the wider mode or the hosts are needed.',
    ),
}

/** The bash tool's arguments, the escalation fields included (they are offered only by a confining executor). */
export const BashArgumentsSchema = z.object({ ...BASE_ARGS, ...ESCALATION_ARGS })
/** The bash tool's arguments as an executor that does not confine offers them: no escalation fields. */
export const BashArgumentsUnsandboxedSchema = z.object(BASE_ARGS)

const JOB_ID = z.string().min(1).describe('The id the bash call returned when it started the job (e.g. "job-1").')

/** job_output's arguments. */
export const JobOutputArgumentsSchema = z.object({
  job_id: JOB_ID,
  wait_ms: z
    .number()
    .min(0)
    .nullish()
    .describe(
      `Wait up to this many milliseconds for the job to end before reading (at most ${MAX_JOB_WAIT_MS}); default: read at once.`,
    ),
})
/** job_kill's arguments. */
export const JobKillArgumentsSchema = z.object({ job_id: JOB_ID })

/** The most entries one sandbox_refusals call returns. */
export const MAX_REFUSALS_LISTED = 50

/** sandbox_refusals' arguments. */
export const SandboxRefusalsArgumentsSchema = z.object({
  after_run: z
    .number()
    .int()
    .min(0)
    .nullish()
    .describe(
      'Only runs numbered above this one (the last call\'s "last run" number); default: every run still logged.',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .nullish()
    .describe(`At most this many runs, the newest (at most ${MAX_REFUSALS_LISTED}); default ${MAX_REFUSALS_LISTED}.`),
})

/** What a model may send the bash tool. */
export type BashArguments = Z.input<typeof BashArgumentsSchema>
/** What a model may send job_output. */
export type JobOutputArguments = Z.input<typeof JobOutputArgumentsSchema>
/** What a model may send job_kill. */
export type JobKillArguments = Z.input<typeof JobKillArgumentsSchema>
/** What a model may send sandbox_refusals. */
export type SandboxRefusalsArguments = Z.input<typeof SandboxRefusalsArgumentsSchema>
