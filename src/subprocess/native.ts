/**
 * The one place that knows the native addon's shape: its typed surface and its loader.
 * Everything above calls these functions through `loadNative()`; nothing else touches the addon.
 */
import { createRequire } from 'node:module'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

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
  pidfdSignal(pidfd: number, signal: number): number
  pidfdOpen(pid: number): number
  closeFd(fd: number): void
  /** Sets close-on-exec on a descriptor opened without it (node-pty's masters); 0 or -errno. */
  setCloexec(fd: number): number
  socketPair(): [number, number] | number
  /** `n` pipes as [r0, w0, r1, w1, …], or -errno (nothing left open). */
  pipes(n: number): number[] | number
  /** Calls back with each chunk read from `fd` (latin1), then with null at EOF; owns the fd. */
  watchRead(fd: number, onChunk: (text: string | null) => void): void
  launcherSend(controlFd: number, request: Buffer, fds: readonly number[]): number
  launcherReceive(controlFd: number, replySize: number, timeoutMs: number): NativeLauncherReply | number
  hostCapabilities(): { setpcap: boolean; setuid: boolean; capLast: number }
  landlockAbi(): number
  landlockCreateRuleset(handledFs: number, handledNet: number, scoped: number, attrSize: number): number
  landlockAddPathRule(rulesetFd: number, path: string, allowed: number): number
}

/** The package root (holds binding.gyp, build/, prebuilds/), from src/ or dist/ alike. */
export const packageRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

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
        `script (node-gyp-build) builds it.` +
        (cause instanceof Error ? `\nLast error: ${cause.message}` : ''),
      { cause },
    )
  }
}

/** Every place a binary may live, in node-gyp-build's order, for the error message. */
function candidatePaths(root: string): string[] {
  const paths = [join(root, 'build', 'Release', 'cordon.node'), join(root, 'build', 'Debug', 'cordon.node')]
  const prebuilds = join(root, 'prebuilds', `${process.platform}-${process.arch}`)
  if (existsSync(prebuilds)) {
    for (const f of readdirSync(prebuilds)) if (f.endsWith('.node')) paths.push(join(prebuilds, f))
  } else {
    paths.push(join(prebuilds, '*.node'))
  }
  return paths
}

const require = createRequire(import.meta.url)
const cache = new Map<string, NativeAddon>()

/** Loads the addon from `root` (default: this package) once; throws NativeLoadError listing every path tried. */
export function loadNative(root: string = packageRoot): NativeAddon {
  const cached = cache.get(root)
  if (cached) return cached
  let addon: NativeAddon
  try {
    const nodeGypBuild = require('node-gyp-build') as (dir: string) => NativeAddon
    addon = nodeGypBuild(root)
  } catch (error) {
    throw new NativeLoadError(candidatePaths(root), error)
  }
  cache.set(root, addon)
  return addon
}

/** The path of the `cordon-exec` helper beside the loaded addon, or undefined when it was not built. */
export function helperPath(root: string = packageRoot): string | undefined {
  const candidates = [
    join(root, 'build', 'Release', 'cordon-exec'),
    join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'cordon-exec'),
  ]
  return candidates.find((p) => existsSync(p))
}
