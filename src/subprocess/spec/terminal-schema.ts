/**
 * The boundary check of a terminal request and of the handle's own arguments: zod schemas, one
 * InvalidRequestError listing every problem, after a hand check that passes the usual requests
 * (fast-check.ts). Nothing is allocated for a request that fails here.
 */
import { constants as osConstants } from 'node:os'
import { InvalidRequestError } from '../../policy/errors.js'
import { onDemand, zod } from '../../policy/schema/zod-on-demand.js'
import { certainlyValidTerminalSpec } from './fast-check.js'
import { processFieldsSchema } from './schema.js'
import type { SubprocessTerminalSpawnSpec } from '../types.js'

/** The largest terminal dimension: `struct winsize` holds unsigned shorts. */
export const MAX_TERMINAL_DIMENSION = 65_535

/** The terminal request's schemas, built on first use. */
const schemas = onDemand(() => {
  const { z } = zod()
  const { argv, cwd, env, graceMs, signal } = processFieldsSchema()
  const dimension = (what: string) =>
    z
      .number()
      .int(`${what} must be a whole number`)
      .min(1, `${what} must be at least 1`)
      .max(MAX_TERMINAL_DIMENSION, `${what} must be at most ${MAX_TERMINAL_DIMENSION}`)

  const spec = z
    .object({
      argv,
      cwd,
      env,
      cols: dimension('cols'),
      rows: dimension('rows'),
      graceMs,
      signal,
      launcher: z.boolean().optional(),
      ruleset: z.object({ closed: z.boolean(), fresh: z.function() }).passthrough().optional(),
      aftermath: z
        .object({
          mustNotAppear: z.array(z.string()).optional(),
          mustStay: z.array(z.object({ path: z.string(), target: z.string() })).optional(),
        })
        .optional(),
      network: z
        .object({ proxyPort: z.number().int().min(1).max(65535), serve: z.function() })
        .strict()
        .optional(),
    })
    .strict()

  const size = z.object({ cols: dimension('cols'), rows: dimension('rows') }).strict()

  const signalName = z
    .string()
    .refine((s) => Object.hasOwn(osConstants.signals, s), 'signal must be a signal name such as SIGINT or SIGTSTP')
  return { spec, size, signal: signalName }
})

/** The terminal spec's zod schema (built on first use). */
export const terminalSpecSchema = () => schemas().spec

/** Returns the spec unchanged when valid; throws InvalidRequestError naming every bad field. */
export function validateTerminalSpec(spec: SubprocessTerminalSpawnSpec): SubprocessTerminalSpawnSpec {
  if (certainlyValidTerminalSpec(spec)) return spec
  const parsed = schemas().spec.safeParse(spec)
  if (!parsed.success) throw InvalidRequestError.fromZod(parsed.error, 'invalid terminal spec')
  return spec
}

/** Checks a resize request; throws InvalidRequestError naming every bad dimension. */
export function validateTerminalSize(cols: number, rows: number): void {
  const fits = (n: number) => Number.isInteger(n) && n >= 1 && n <= MAX_TERMINAL_DIMENSION
  if (fits(cols) && fits(rows)) return
  const parsed = schemas().size.safeParse({ cols, rows })
  if (!parsed.success) throw InvalidRequestError.fromZod(parsed.error, 'invalid terminal size')
}

/** Checks a signal name (`SIGINT`…); throws InvalidRequestError otherwise. */
export function validateSignalName(signal: string): NodeJS.Signals {
  if (typeof signal === 'string' && Object.hasOwn(osConstants.signals, signal)) return signal as NodeJS.Signals
  const parsed = schemas().signal.safeParse(signal)
  if (!parsed.success) throw InvalidRequestError.fromZod(parsed.error, 'invalid signal')
  return signal as NodeJS.Signals
}
