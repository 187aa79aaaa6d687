/**
 * The Seatbelt launch, as a pure function: a rendered profile and a command in, the argv that
 * runs the command confined out:
 *
 *   /usr/bin/sandbox-exec -p PROFILE [-D KEY=VALUE]... -- COMMAND...
 *
 * Always the absolute `/usr/bin/sandbox-exec` (never a PATH lookup a command could shadow).
 * `-D` defines what the profile reads with `(param "KEY")`; `--` ends sandbox-exec's options, so
 * a command word that starts with `-` is the command's. Nothing in the argv can contain NUL.
 */
import { InvalidRequestError, formatZodIssues } from '../../policy/errors.js'
import { onDemand, zod } from '../../policy/schema/zod-on-demand.js'

/** Where macOS ships sandbox-exec. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec'

/** A `-D` parameter name: what `(param "KEY")` can name, and never an `=`. */
export const SEATBELT_PARAM_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Validates SeatbeltLaunchOptions (built on first use). */
export const seatbeltLaunchOptionsSchema = onDemand(() => {
  const { z } = zod()
  const noNul = (what: string) => z.string().refine((s) => !s.includes('\0'), `${what} must not contain a NUL byte`)
  return z
    .object({
      profile: noNul('the profile').refine((s) => s.trim().length > 0, 'the profile must not be empty'),
      params: z.record(z.string().regex(SEATBELT_PARAM_KEY, 'must be a parameter name'), noNul('a value')).optional(),
      command: z.array(noNul('a command word')).min(1, 'the command must not be empty'),
    })
    .strict()
})

/** What the launch needs. */
export interface SeatbeltLaunchOptions {
  /** The SBPL text (`renderSeatbeltProfile(...).profile`). */
  profile: string
  /** Values the profile reads with `(param "KEY")`, passed as `-D KEY=VALUE` in key order. */
  params?: Readonly<Record<string, string>> | undefined
  /** The command and its arguments. */
  command: readonly string[]
}

/** The `sandbox-exec` argv that runs `options.command` under `options.profile`. */
export function seatbeltLaunchArgv(options: SeatbeltLaunchOptions): string[] {
  const parsed = seatbeltLaunchOptionsSchema().safeParse(options)
  if (!parsed.success) {
    throw new InvalidRequestError(formatZodIssues(parsed.error), { context: 'invalid Seatbelt launch' })
  }
  const params = Object.entries(options.params ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([key, value]) => ['-D', `${key}=${value}`])
  return [SANDBOX_EXEC, '-p', options.profile, ...params, '--', ...options.command]
}
