/**
 * The boundary check of a spawn request: one zod schema, one typed error listing every problem.
 * Nothing is spawned for a request that fails here. A fast check accepts the common valid specs
 * first (fast-check.ts); the schema decides everything else.
 */
import { InvalidRequestError } from '../../policy/errors.js'
import { onDemand, zod } from '../../policy/schema/zod-on-demand.js'
import { certainlyValidSpec } from './fast-check.js'
import { MAX_TIMER_DELAY_MS } from './limits.js'
import type { SubprocessSpawnSpec } from '../types.js'

export { MAX_TIMER_DELAY_MS }

/** The fields a pipe spawn and a terminal share (argv, cwd, env, graceMs, signal), built on first use. */
export const processFieldsSchema = onDemand(() => {
  const { z } = zod()
  const noNul = (what: string) => z.string().refine((s) => !s.includes('\0'), `${what} must not contain a NUL byte`)
  return {
    argv: z
      .array(noNul('argv entry'))
      .min(1, 'argv must name a program')
      .refine((a) => (a[0] ?? '') !== '', 'argv[0] must not be empty'),
    cwd: noNul('cwd').refine((p) => p.startsWith('/'), 'cwd must be an absolute path'),
    env: z.record(z.string(), z.union([z.string(), z.undefined()])).optional(),
    graceMs: z
      .number()
      .refine(
        (n) => Number.isFinite(n) && n > 0 && n <= MAX_TIMER_DELAY_MS,
        `graceMs must be a positive finite number of ms, at most ${MAX_TIMER_DELAY_MS}`,
      ),
    signal: z.instanceof(AbortSignal).optional(),
  }
})

/** The schema of a confinement's bounds (src/subprocess/types.ts:SubprocessBounds). */
function boundsSchema() {
  const { z } = zod()
  const count = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional()
  return z
    .object({
      pids: count,
      memoryBytes: count,
      cpuGroup: z.boolean().optional(),
      oomScoreAdj: z.number().int().min(1).max(1000).optional(),
    })
    .strict()
}

/** The schema of a spec's confinement (what the sandbox floor adds). */
function confinementSchema() {
  const { z } = zod()
  const port = z.number().int().min(1).max(65535)
  return z
    .object({
      backend: z.union([z.literal('landlock'), z.literal('bubblewrap'), z.literal('seatbelt')]),
      mode: z.union([z.literal('read-only'), z.literal('workspace-write')]),
      steps: z.object({}).passthrough().optional(),
      namespaces: z
        .object({
          ipc: z.boolean().optional(),
          net: z.boolean().optional(),
          user: z.boolean().optional(),
          keys: z.boolean().optional(),
          view: z.array(z.string().regex(/^\//, 'must be an absolute path')).readonly().optional(),
        })
        .strict()
        .optional(),
      wrapper: z
        .object({ ruleset: z.object({}).passthrough().optional() })
        .strict()
        .optional(),
      mustNotAppear: z.array(z.string().regex(/^\//, 'must be an absolute path')).readonly().optional(),
      mustStay: z
        .array(
          z
            .object({
              path: z
                .string()
                .regex(/^\//, 'must be an absolute path')
                .refine((p) => !p.includes('\0'), 'no NUL'),
              target: z
                .string()
                .min(1)
                .refine((t) => !t.includes('\0'), 'no NUL'),
            })
            .strict(),
        )
        .readonly()
        .optional(),
      resident: z
        .object({
          key: z.string().min(1),
          argv: z.array(z.string().refine((a) => !a.includes('\0'), 'no NUL')).min(1),
          wrapperSteps: z.object({}).passthrough().optional(),
          command: z
            .object({
              path: z.string().regex(/^\//, 'must be an absolute path'),
              argv: z.array(z.string().refine((a) => !a.includes('\0'), 'no NUL')).min(1),
            })
            .strict(),
          steps: z.object({}).passthrough(),
          proxyPort: port.optional(),
        })
        .strict()
        .optional(),
      bounds: boundsSchema().optional(),
      network: z
        .object({
          proxyPort: port,
          serve: z.custom<(fd: number) => unknown>((f) => typeof f === 'function', 'must be a function'),
        })
        .strict()
        .optional(),
    })
    .strict()
}

/** The spawn spec's zod schema, built on first use (the fast check passes the usual specs without it). */
export const spawnSpecSchema = onDemand(() => {
  const { z } = zod()
  const { argv, cwd, env, graceMs, signal } = processFieldsSchema()
  const byteCap = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)
  const spillDir = z.string().regex(/^\//, 'must be an absolute path')
  const collect = z
    .object({ maxBytes: byteCap, spill: z.object({ maxBytes: byteCap, dir: spillDir.optional() }).strict().optional() })
    .strict()
  const output = z.union([z.literal('pipe'), z.literal('inherit'), collect])

  /** The schema of a SubprocessSpawnSpec. */
  return z
    .object({
      argv,
      cwd,
      stdio: z
        .object({
          stdin: z.union([z.literal('ignore'), z.literal('pipe'), z.object({ data: z.string() }).strict()]),
          stdout: output,
          stderr: output,
        })
        .strict(),
      graceMs,
      signal,
      env,
      environment: z.union([z.literal('scrubbed'), z.literal('minimal')]).optional(),
      confinement: confinementSchema().optional(),
      supervise: z.boolean().optional(),
      onOutput: z.function().optional(),
    })
    .strict()
})

/** Returns the spec unchanged when valid; throws InvalidRequestError naming every bad field. */
export function validateSpawnSpec(spec: SubprocessSpawnSpec): SubprocessSpawnSpec {
  if (certainlyValidSpec(spec)) return spec
  const parsed = spawnSpecSchema().safeParse(spec)
  if (!parsed.success) throw InvalidRequestError.fromZod(parsed.error, 'invalid spawn spec')
  return spec
}
