/**
 * The one place that knows the native addon's shape: its typed surface and its loader.
 * Everything above calls these functions through `loadNative()`; nothing else touches the addon.
 */
import { createRequire } from 'node:module'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { PACKAGE_ROOT } from '../policy/package-root.js'
import { REMEDY_BUILD_HELPER, REMEDY_UNTRUSTED_PROGRAM } from '../policy/remedies.js'
import { checkTrustedProgram, type RefusedProgram } from './trusted-program.js'

/** How fd N of the child is wired: /dev/null, a fresh pipe, the host's own fd N, or (>= 0) that fd. */
export const Slot = { Null: -1, Pipe: -2, Inherit: -3 } as const
/** One slot of a native spawn: a {@link Slot} value, or a host fd (>= 0) installed as that child fd. */
export type SlotValue = (typeof Slot)[keyof typeof Slot] | number

/** One resource limit the child sets on itself (`RLIMIT_*` number, soft and hard). */
export interface NativeRlimit {
  resource: number
  soft: number
  hard: number
}

/** What the child applies to itself before exec (built by the sandbox floor). */
export interface NativeConfinementPlan {
  dropCaps: boolean
  dropBounding: boolean
  capLast: number
  noNewPrivs: boolean
  rulesetFd?: number | undefined
  landlockFlags?: number | undefined
  filter?: Buffer | undefined
  credentials?: { uid: number; gid: number } | undefined
  rlimits?: readonly NativeRlimit[] | undefined
  /** Raised first, in the child (1..1000). */
  oomScoreAdj?: number | undefined
}

/** A started child: its pid, an owned pidfd, and the host ends of its pipes (null otherwise). */
export interface NativeSpawned {
  pid: number
  pidfd: number
  fds: (number | null)[]
}

/** A failure before exec: the stage that failed and its errno. */
export interface NativeSpawnFailure {
  stage: string
  errno: number
}

/** The reply of one launcher request, and the descriptors that came with it. */
export interface NativeLauncherReply {
  reply: Buffer
  fds: number[]
}

/** The addon's functions, exactly as native/addon.cc registers them (failures are -errno). */
export interface NativeAddon {
  spawn(
    path: string,
    argv: readonly string[],
    envp: readonly string[],
    cwd: string | null,
    slots: readonly SlotValue[],
    plan: NativeConfinementPlan | null,
  ): NativeSpawned | NativeSpawnFailure
  /** Calls back once the process exits; with `reap` (our child) with its status, else with nulls. */
  watch(
    pidfd: number,
    reap: boolean,
    keepAlive: boolean,
    onExit: (exitCode: number | null, signal: number | null) => void,
  ): void
  /** Drops every watch still waiting, without calling back (at the process's 'exit'). */
  stopWatches(): void
  pidfdSignal(pidfd: number, signal: number): number
  pidfdOpen(pid: number): number
  closeFd(fd: number): void
  /** Sets close-on-exec on a descriptor opened without it (node-pty's masters); 0 or -errno. */
  setCloexec(fd: number, on?: boolean): number
  /** Turns a terminal's output processing (OPOST) on or off, nothing else (tcsetattr); 0 or -errno. */
  setOutputProcessing(fd: number, on: boolean): number
  socketPair(): [number, number] | number
  /** `n` pipes as [r0, w0, r1, w1, …], or -errno (nothing left open). */
  pipes(n: number): number[] | number
  /**
   * Reads `fd` into `buffer` as it becomes readable: onRead(n) with each read's length (bytes
   * [0, n) valid during the call), then once with 0 at EOF or -errno; owns the fd. Returns an id.
   */
  readPipe(fd: number, buffer: Buffer, onRead: (n: number) => void): number
  /**
   * Stops a readPipe reader and closes its fd (a finished id is ignored); with `readFirst` it
   * first hands over what the pipe already holds (bounded), else no callback follows.
   */
  stopPipe(id: number, readFirst: boolean): void
  /**
   * Removes the absolute `path` and everything beneath it on the thread pool, never following a
   * link (every step relative to an O_NOFOLLOW directory fd); calls back with 0 or the first errno.
   */
  removeTree(path: string, onDone: (errno: number) => void): void
  /** removeTree on the calling thread: 0 or the first errno (for small trees). */
  removeTreeSync(path: string): number
  launcherSend(controlFd: number, request: Buffer, fds: readonly number[]): number
  launcherReceive(controlFd: number, replySize: number, timeoutMs: number): NativeLauncherReply | number
  hostCapabilities(): { setpcap: boolean; capLast: number }
  landlockAbi(): number
  landlockCreateRuleset(handledFs: number, handledNet: number, scoped: number, attrSize: number): number
  landlockAddPathRule(rulesetFd: number, path: string, allowed: number): number
  /** A size-bounded tmpfs over `path` (mode 0700, uid:gid), or a new size for it (`remount`); 0 or -errno. */
  tmpfsMount(path: string, sizeBytes: number, uid: number, gid: number, remount: boolean): number
  /** Detaches the mount at `path` (MNT_DETACH, never following a link); 0 or -errno. */
  detachMount(path: string): number
}

/** The package root (holds binding.gyp, build/, prebuilds/): policy/package-root.ts finds it, whatever this module's depth. */
export const packageRoot: string = PACKAGE_ROOT

/** Set to `off` to make the addon unloadable (a host where it cannot load: tests, or a deliberate choice). */
export const ADDON_ENV = 'CORDON_ADDON'

/** Thrown when no addon binary can be loaded; lists every path tried and how to build one. */
export class NativeLoadError extends Error {
  override readonly name = 'NativeLoadError'
  readonly code = 'CORDON_NATIVE_MISSING'
  constructor(
    readonly tried: string[],
    cause: unknown,
  ) {
    super(
      `cordon: could not load the native addon (cordon.node).\n` +
        `Tried:\n${tried.map((p) => `  - ${p}`).join('\n')}\n` +
        `Build it from source with \`npm run build:native\` (needs python3, make and a C++ compiler; ` +
        `on Debian: apt-get install -y python3 make g++), or reinstall the package so its install ` +
        `script builds it. Without it cordon uses the portable spawn path (node:child_process).` +
        (cause instanceof Error ? `\nLast error: ${cause.message}` : ''),
      { cause },
    )
  }
}

/** Whether `value` is a NativeLoadError, from this realm or any other (brand on name and code). */
export function isNativeLoadError(value: unknown): value is NativeLoadError {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return v.name === 'NativeLoadError' && v.code === 'CORDON_NATIVE_MISSING' && Array.isArray(v.tried)
}

/** The prebuild directory of this platform (`prebuilds/linux-x64`). */
function prebuildDir(root: string): string {
  return join(root, 'prebuilds', `${process.platform}-${process.arch}`)
}

/** Whether this process runs on musl (Alpine and the like): glibc builds do not load there. */
function isMusl(): boolean {
  if (process.platform !== 'linux') return false
  // ldd names its libc (cheap); the process report knows for sure but costs ~10 ms.
  try {
    const ldd = readFileSync('/usr/bin/ldd', 'latin1')
    if (ldd.includes('musl')) return true
    if (ldd.includes('GNU C Library') || ldd.includes('GLIBC')) return false
  } catch {
    // no ldd: ask the report
  }
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  return report?.header?.glibcVersionRuntime === undefined
}

/**
 * Every place a binary may live, in the order tried: a local build (build/Release, build/Debug)
 * first, because it exists only when someone compiled this tree and is newer than any prebuild;
 * then this platform's prebuilds, the libc-tagged one of this libc first, an untagged one next.
 * A candidate that exists but does not load (another libc, a broken build) falls through.
 */
export function candidatePaths(root: string = packageRoot): string[] {
  return [...localCandidates(root), ...prebuildCandidates(root)]
}

/** The local build's candidates (none under PREBUILDS_ONLY, as node-gyp-build has it). */
function localCandidates(root: string): string[] {
  if (process.env.PREBUILDS_ONLY !== undefined) return []
  return [join(root, 'build', 'Release', 'cordon.node'), join(root, 'build', 'Debug', 'cordon.node')]
}

/** This platform's prebuilds, the libc-tagged one of this libc first. */
function prebuildCandidates(root: string): string[] {
  const paths: string[] = []
  const dir = prebuildDir(root)
  let files: string[] = []
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.node'))
  } catch {
    paths.push(join(dir, '*.node'))
  }
  // The libc is asked only when prebuilds exist (the report costs a few ms).
  const libc = files.length > 0 && isMusl() ? 'musl' : 'glibc'
  const otherLibc = libc === 'musl' ? 'glibc' : 'musl'
  files = files.filter((f) => !f.includes(`.${otherLibc}.`))
  const rank = (f: string) => (f.includes(`.${libc}.`) ? 0 : 1)
  for (const f of files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))) paths.push(join(dir, f))
  return paths
}

const require = createRequire(import.meta.url)
const cache = new Map<string, { addon: NativeAddon; path: string }>()

/** Loads the addon from `root` (default: this package) once; throws NativeLoadError listing every path tried. */
export function loadNative(root: string = packageRoot): NativeAddon {
  return loadNativeWithPath(root).addon
}

/** The addon and the file it was loaded from; throws NativeLoadError listing every path tried. */
export function loadNativeWithPath(root: string = packageRoot): { addon: NativeAddon; path: string } {
  const cached = cache.get(root)
  if (cached) return cached
  if (process.env[ADDON_ENV] === 'off') {
    throw new NativeLoadError(candidatePaths(root), new Error(`loading is disabled by ${ADDON_ENV}=off`))
  }
  let lastError: unknown = new Error('no candidate file exists')
  const tried: string[] = []
  // The prebuilds are listed only when no local build loaded (their libc check costs a file read).
  const candidates = (function* () {
    yield* localCandidates(root)
    yield* prebuildCandidates(root)
  })()
  for (const file of candidates) {
    if (!existsSync(file)) {
      tried.push(`${file} (missing)`)
      continue
    }
    try {
      const loaded = { addon: require(file) as NativeAddon, path: file }
      cache.set(root, loaded)
      // Node's teardown runs the loop once more: an unheld watch must not call back into it.
      process.once('exit', () => loaded.addon.stopWatches())
      return loaded
    } catch (error) {
      lastError = error
      tried.push(`${file} (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`)
    }
  }
  throw new NativeLoadError(tried, lastError)
}

/**
 * The `cordon-exec` helper the host may run, and every candidate refused on the way: the one
 * beside the loaded addon first (a prebuild's helper with its prebuild), then build/Release, then
 * this platform's prebuilds. A candidate must pass checkTrustedProgram (owned by root or the host
 * user, writable by neither group nor others, nor any directory above it). The helper is a static
 * executable of its own: it runs where the addon does not load (another libc), so it is looked
 * for whether or not the addon loaded.
 */
export function helperLookup(root: string = packageRoot): { path?: string; refused: RefusedProgram[] } {
  const beside = cache.get(root)
  const candidates = [
    ...(beside ? [join(dirname(beside.path), 'cordon-exec')] : []),
    join(root, 'build', 'Release', 'cordon-exec'),
    join(prebuildDir(root), 'cordon-exec'),
  ]
  const refused: RefusedProgram[] = []
  for (const candidate of candidates) {
    if (!existsSync(candidate) || refused.some((r) => r.path === candidate)) continue
    const trust = checkTrustedProgram(candidate)
    if (trust.ok) return { path: candidate, refused }
    refused.push({ path: trust.path, reason: trust.reason })
  }
  return { refused }
}

/** The path of the trusted `cordon-exec` helper (helperLookup), or undefined when none was built or none is trusted. */
export function helperPath(root: string = packageRoot): string | undefined {
  return helperLookup(root).path
}

/** Why there is no helper to run: not built, or every one refused (for the probes' reasons). */
export function helperMissingReason(root: string = packageRoot): string {
  const { refused } = helperLookup(root)
  if (refused.length === 0) return 'the cordon-exec helper was not built'
  return `the cordon-exec helper is refused: ${refused.map((r) => `${r.path}: ${r.reason}`).join('; ')}`
}

/** A probe's unusable verdict when no helper may run: why, what to do, and what was refused. */
export function helperVerdict(root: string = packageRoot): {
  usable: false
  reason: string
  remedy: string
  refusedPrograms?: RefusedProgram[]
} {
  const { refused } = helperLookup(root)
  const reason = helperMissingReason(root)
  if (refused.length === 0) return { usable: false, reason, remedy: REMEDY_BUILD_HELPER }
  return { usable: false, reason, remedy: REMEDY_UNTRUSTED_PROGRAM, refusedPrograms: refused }
}
