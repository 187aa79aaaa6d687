/**
 * Which spawn path this host uses: `native` (the addon's clone child, pidfds, the launcher) or
 * `portable` (node:child_process), and why. The addon is preferred wherever it loads; the
 * portable path is what remains where it cannot (macOS, another libc, a failed or skipped build)
 * and what a caller or `CORDON_SPAWN=portable` forces (tests run the subprocess suite on both).
 *
 * The portable path never runs a Landlock plan (that needs the native child, which confines
 * itself between clone and exec). It runs wrapper argvs (bubblewrap, sandbox-exec) and, where the
 * static `cordon-exec` helper exists, supervises through `cordon-exec init`.
 */
import { InvalidRequestError } from '../../policy/errors.js'
import { ADDON_ENV, helperPath, loadNativeWithPath, NativeLoadError } from '../native.js'

/** The two spawn paths. */
export const SPAWN_PATHS = ['native', 'portable'] as const

/** One spawn path's name. */
export type SpawnPathName = (typeof SPAWN_PATHS)[number]

/** What a caller may ask for: a path, or `auto` (native where the addon loads). */
export type SpawnPathRequest = SpawnPathName | 'auto'

/** The environment variable that forces a path for the whole process (`native`, `portable`, `auto`). */
export const SPAWN_ENV = 'CORDON_SPAWN'

/** The spawn path in use and why, as `cordon probe` reports it. */
export interface SpawnPathChoice {
  path: SpawnPathName
  /** Why this path: the file the addon was loaded from, the force, or why the addon did not load. */
  reason: string
  /** Whether a caller or the environment forced it (rather than the addon's availability). */
  forced: boolean
  /** The addon file in use (native only). */
  addon?: string
  /** The `cordon-exec` helper, when one exists: portable runs supervise through it. */
  helper?: string
}

/** The request in `CORDON_SPAWN` (default `auto`); throws InvalidRequestError for any other value. */
export function spawnPathFromEnv(env: NodeJS.ProcessEnv = process.env): SpawnPathRequest {
  const value = env[SPAWN_ENV]
  if (value === undefined || value === '') return 'auto'
  if (value === 'auto' || value === 'native' || value === 'portable') return value
  throw new InvalidRequestError([`${SPAWN_ENV}: must be native, portable or auto, got ${JSON.stringify(value)}`])
}

/**
 * Decides the spawn path for `request` (default: `CORDON_SPAWN`, else `auto`). `native` throws
 * NativeLoadError when the addon does not load: an explicit request is never silently downgraded.
 */
export function chooseSpawnPath(request: SpawnPathRequest = spawnPathFromEnv()): SpawnPathChoice {
  // Asked after the load attempt: the helper beside the loaded addon comes first.
  const withHelper = <T extends object>(choice: T) => {
    const helper = helperPath()
    return helper === undefined ? choice : { ...choice, helper }
  }
  if (request === 'portable') {
    const why = process.env[SPAWN_ENV] === 'portable' ? `${SPAWN_ENV}=portable` : 'the caller asked for it'
    return withHelper({ path: 'portable', forced: true, reason: `forced (${why})` })
  }
  try {
    const { path } = loadNativeWithPath()
    return withHelper({
      path: 'native',
      forced: request === 'native',
      reason: `the native addon loaded from ${path}`,
      addon: path,
    })
  } catch (error) {
    if (request === 'native') throw error
    return withHelper({ path: 'portable', forced: false, reason: whyNoAddon(error) })
  }
}

/** One line on why the addon did not load. */
function whyNoAddon(error: unknown): string {
  if (process.env[ADDON_ENV] === 'off') return `the native addon is disabled (${ADDON_ENV}=off)`
  if (process.platform !== 'linux') return `the native addon is Linux-only (this is ${process.platform})`
  if (error instanceof NativeLoadError) {
    const last = error.cause instanceof Error ? error.cause.message.split('\n')[0] : 'no binary found'
    return `the native addon could not be loaded (${last}; tried ${error.tried.length} places)`
  }
  return `the native addon could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`
}

let processChoice: SpawnPathChoice | undefined

/** The process-wide spawn path (from `CORDON_SPAWN` and the addon), decided once. */
export function processSpawnPath(): SpawnPathChoice {
  processChoice ??= chooseSpawnPath()
  return processChoice
}
