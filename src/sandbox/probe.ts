/**
 * The probe: which backends really confine on this host, each proved by its canary, and for
 * each one that does not, why and what a person can do about it. Cached per process (unusable
 * verdicts included); never throws for an unusable backend.
 *
 * The spawn path is part of the verdict: on the portable path (no addon, or forced) Landlock is
 * unusable (it confines the native child between clone and exec), while bubblewrap and Seatbelt
 * wrap the command's argv and are probed through the very runtime their runs use.
 */
import {
  type BackendCapability,
  SANDBOX_BACKENDS,
  type SandboxBackendName,
  type SandboxCapabilities,
  type SpawnPathFacts,
} from '../policy/backends.js'
import { processSpawnPath, type SpawnPathChoice } from '../subprocess/portable/spawn-path.js'
import { probeBubblewrap } from './probe-bubblewrap.js'
import { probeCacheKey, readProbeCache, writeProbeCache } from './probe-disk-cache.js'
import { LANDLOCK_LIMITATIONS, probeLandlock, REMEDY_BUILD_HELPER } from './probe-landlock.js'
import { probeSeatbelt } from './seatbelt-probe.js'
import { defaultChain } from './select.js'

export { SANDBOX_BACKENDS }
export type { BackendCapability, SandboxBackendName, SandboxCapabilities }

const probeCache = new Map<string, Promise<SandboxCapabilities>>()

/** Options for probeBackends. */
export interface ProbeBackendsOptions {
  /** The PATH searched for runner executables (`bwrap`); default `process.env.PATH`. */
  searchPath?: string | undefined
  /** The spawn path runs take; default the process's (`CORDON_SPAWN`, else native where the addon loads). */
  spawnPath?: SpawnPathChoice | undefined
  /**
   * The verdict on disk (probe-disk-cache.ts): `use` reads it and writes a fresh one, `refresh`
   * probes anew and writes it; absent, the disk is not touched (a library's default).
   */
  diskCache?: 'use' | 'refresh' | undefined
}

/** The Landlock verdict on the portable spawn path: unusable, and why. */
export function landlockOnPortable(spawnPath: SpawnPathChoice): BackendCapability {
  return {
    backend: 'landlock',
    usable: false,
    reason: `the portable spawn path is in use (${spawnPath.reason}): Landlock confines the native child between clone and exec, which node:child_process cannot do`,
    remedy: spawnPath.forced
      ? 'Unset CORDON_SPAWN (or ask for the native spawn path) to use Landlock.'
      : REMEDY_BUILD_HELPER,
    limitations: [...LANDLOCK_LIMITATIONS],
    probeMs: 0,
  }
}

/** The spawn path as the capabilities report it. */
function spawnPathFacts(choice: SpawnPathChoice): SpawnPathFacts {
  return { path: choice.path, reason: choice.reason, ...(choice.helper === undefined ? {} : { helper: choice.helper }) }
}

/** Probes each backend of `chain` (default: this platform's) once per process (cached, including unusable verdicts). */
export function probeBackends(
  chain: readonly SandboxBackendName[] = defaultChain(),
  options: ProbeBackendsOptions = {},
): Promise<SandboxCapabilities> {
  const spawnPath = options.spawnPath ?? processSpawnPath()
  const key = `${chain.join(',')}\0${options.searchPath ?? process.env.PATH ?? ''}\0${spawnPath.path}`
  let cached = probeCache.get(key)
  if (!cached) {
    const diskKey = options.diskCache
      ? probeCacheKey(chain, options.searchPath ?? process.env.PATH, spawnPath.path)
      : ''
    const fromDisk = options.diskCache === 'use' ? readProbeCache(diskKey) : undefined
    if (fromDisk) {
      cached = Promise.resolve(fromDisk)
      probeCache.set(key, cached)
      return cached
    }
    cached = (async () => {
      const backends: Partial<Record<SandboxBackendName, BackendCapability>> = {}
      for (const name of chain) {
        if (name === 'landlock')
          backends.landlock = spawnPath.path === 'native' ? await probeLandlock() : landlockOnPortable(spawnPath)
        if (name === 'bubblewrap') backends.bubblewrap = await probeBubblewrap({ searchPath: options.searchPath })
        if (name === 'seatbelt') backends.seatbelt = await probeSeatbelt()
      }
      const caps = { platform: process.platform, chain: [...chain], backends, spawnPath: spawnPathFacts(spawnPath) }
      if (options.diskCache) writeProbeCache(diskKey, caps)
      return caps
    })()
    probeCache.set(key, cached)
  }
  return cached
}

/** Forgets cached probe verdicts (a repaired host is seen by the next probe). */
export function clearProbeCache(): void {
  probeCache.clear()
}
