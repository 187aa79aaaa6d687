/**
 * The probe: which backends really confine on this host, each proved by its canary, and for
 * each one that does not, why and what a person can do about it. Cached per process (unusable
 * verdicts included); never throws for an unusable backend.
 */
import {
  type BackendCapability,
  SANDBOX_BACKENDS,
  type SandboxBackendName,
  type SandboxCapabilities,
} from '../policy/backends.js'
import { probeBubblewrap } from './probe-bubblewrap.js'
import { probeLandlock } from './probe-landlock.js'

export { SANDBOX_BACKENDS }
export type { BackendCapability, SandboxBackendName, SandboxCapabilities }

const probeCache = new Map<string, Promise<SandboxCapabilities>>()

/** Options for probeBackends. */
export interface ProbeBackendsOptions {
  /** The PATH searched for runner executables (`bwrap`); default `process.env.PATH`. */
  searchPath?: string | undefined
}

/** Probes each backend of `chain` once per process (cached, including unusable verdicts). */
export function probeBackends(
  chain: readonly SandboxBackendName[] = SANDBOX_BACKENDS,
  options: ProbeBackendsOptions = {},
): Promise<SandboxCapabilities> {
  const key = `${chain.join(',')}\0${options.searchPath ?? process.env.PATH ?? ''}`
  let cached = probeCache.get(key)
  if (!cached) {
    cached = (async () => {
      const backends: Partial<Record<SandboxBackendName, BackendCapability>> = {}
      for (const name of chain) {
        if (name === 'landlock') backends.landlock = await probeLandlock()
        if (name === 'bubblewrap') backends.bubblewrap = await probeBubblewrap({ searchPath: options.searchPath })
      }
      return { platform: process.platform, chain: [...chain], backends }
    })()
    probeCache.set(key, cached)
  }
  return cached
}

/** Forgets cached probe verdicts (a repaired host is seen by the next probe). */
export function clearProbeCache(): void {
  probeCache.clear()
}
