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
import { backendOf } from './backend.js'
import { configuredBwrap, type HostPrograms } from './bubblewrap/program.js'
import { probeCacheKey, readProbeCache, writeProbeCache } from './probe/disk-cache.js'
import { defaultChain } from './select.js'

export { landlockOnPortable } from './landlock/backend.js'

export { SANDBOX_BACKENDS }
export type { BackendCapability, SandboxBackendName, SandboxCapabilities }

const probeCache = new Map<string, Promise<SandboxCapabilities>>()

/** Options for probeBackends. */
export interface ProbeBackendsOptions {
  /** Runner executables the caller pinned (absolute, checked); default `CORDON_BWRAP`, else the trusted search path. */
  programs?: HostPrograms | undefined
  /** The spawn path runs take; default the process's (`CORDON_SPAWN`, else native where the addon loads). */
  spawnPath?: SpawnPathChoice | undefined
  /**
   * The verdict on disk (probe/disk-cache.ts): `use` reads it and writes a fresh one, `refresh`
   * probes anew and writes it; absent, the disk is not touched (a library's default).
   */
  diskCache?: 'use' | 'refresh' | undefined
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
  const programs = { bwrap: configuredBwrap(options.programs) }
  const key = `${chain.join(',')}\0${programs.bwrap ?? ''}\0${spawnPath.path}`
  let cached = probeCache.get(key)
  if (!cached) {
    const diskKey = options.diskCache ? probeCacheKey(chain, programs.bwrap, spawnPath.path) : ''
    const fromDisk = options.diskCache === 'use' ? readProbeCache(diskKey) : undefined
    if (fromDisk) {
      cached = Promise.resolve(fromDisk)
      probeCache.set(key, cached)
      return cached
    }
    cached = (async () => {
      const backends: Partial<Record<SandboxBackendName, BackendCapability>> = {}
      for (const name of chain) {
        // A name outside the table (a caller's typo) gets no verdict, as before.
        const backend = backendOf(name) as ReturnType<typeof backendOf> | undefined
        if (backend) backends[name] = await backend.probe({ programs, spawnPath })
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
