/**
 * CORDON_REQUIRE_BACKENDS: a comma list of backends that must be usable (CI sets it), so a
 * missing backend is a failure there and never a silent skip.
 */

/** The backends named in CORDON_REQUIRE_BACKENDS (trimmed, lower-case, no empties). */
export function requiredBackends(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.CORDON_REQUIRE_BACKENDS ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0)
}

/** Whether `backend` must be usable in this environment. */
export function isBackendRequired(backend: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return requiredBackends(env).includes(backend.toLowerCase())
}
