/**
 * Which `bwrap` the host runs: an absolute path the caller configures (`programs.bwrap`, else
 * `CORDON_BWRAP`), or the first one on the fixed trusted search path, never the caller's PATH
 * (a harness started through npm has `<project>/node_modules/.bin` on it, which a confined
 * command may write). Either way the file must pass checkTrustedProgram; a configured path that
 * fails makes bubblewrap unusable (no fallback), and every refused candidate is reported.
 */
import { existsSync } from 'node:fs'
import type { BackendCapability } from '../../policy/backends.js'
import {
  checkTrustedProgram,
  findTrustedProgram,
  type ProgramIdentity,
  type RefusedProgram,
  recordedProgramProblem,
  TRUSTED_SEARCH_PATH,
} from '../../subprocess/trusted-program.js'

/** The environment variable naming the bwrap to run (an absolute path, checked like any other). */
export const BWRAP_ENV = 'CORDON_BWRAP'

/** The programs a caller may pin instead of the trusted search path. */
export interface HostPrograms {
  /** Absolute path of `bwrap`; default `CORDON_BWRAP`, else the first trusted one on /usr/bin:/bin:/usr/sbin:/sbin. */
  bwrap?: string | undefined
}

/** The bwrap the caller configured (option, else environment), or undefined for the trusted search. */
export function configuredBwrap(
  programs: HostPrograms | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const chosen = programs?.bwrap ?? env[BWRAP_ENV]
  return chosen === undefined || chosen === '' ? undefined : chosen
}

/** The bwrap chosen, with every candidate refused on the way; or why there is none. */
export type BwrapChoice =
  | { identity: ProgramIdentity; refused: RefusedProgram[] }
  | { identity?: undefined; reason: string; refused: RefusedProgram[]; untrusted: boolean }

/** The bwrap to run: `configured` when given (checked, no fallback), else the trusted search path's. */
export function chooseBwrap(configured: string | undefined): BwrapChoice {
  if (configured !== undefined) {
    const trust = checkTrustedProgram(configured)
    if (trust.ok) return { identity: trust.identity, refused: [] }
    const refused = [{ path: trust.path, reason: trust.reason }]
    const reason = `the configured bwrap ${trust.path} is refused: ${trust.reason}`
    return { reason, refused, untrusted: existsSync(configured) }
  }
  const found = findTrustedProgram('bwrap')
  if (found.identity) return { identity: found.identity, refused: found.refused }
  const untrusted = found.refused.length > 0
  const reason = untrusted
    ? `no trusted bwrap on ${TRUSTED_SEARCH_PATH.join(':')} (${found.refused.map((r) => `${r.path}: ${r.reason}`).join('; ')})`
    : `bwrap was not found on ${TRUSTED_SEARCH_PATH.join(':')} (nor configured through ${BWRAP_ENV})`
  return { reason, refused: found.refused, untrusted }
}

/**
 * Why the probe's bwrap may not be run now (replaced, moved, or no longer trusted since it was
 * checked), or undefined when it may. A capability without recorded identity is checked afresh.
 */
export function bwrapProblem(capability: BackendCapability): string | undefined {
  if (capability.executable === undefined) return 'the probe recorded no bwrap executable'
  return recordedProgramProblem(capability.executable, capability.executableIdentity)
}
