/**
 * The Landlock backend's plan: a policy's grants (`grantsFor`) turned into rights masks for the
 * kernel's ABI, a ruleset fd built in the host, and a cache of those fds keyed by what the rules
 * actually name — the (device, inode) of every granted path — so a recreated root is never served
 * a stale ruleset. The cache is an LRU; evicted fds are closed after a grace period (a spec that
 * was confined just before the eviction may still be spawned), and all of them on dispose.
 */
import fs from 'node:fs'
import { InvalidRequestError } from '../policy/errors.js'
import type { FsAccess, SandboxGrants } from '../policy/grants.js'
import type { EffectClass } from '../policy/vocabulary.js'

/** Landlock filesystem rights (`LANDLOCK_ACCESS_FS_*`). */
export const FS = {
  EXECUTE: 1 << 0,
  WRITE_FILE: 1 << 1,
  READ_FILE: 1 << 2,
  READ_DIR: 1 << 3,
  REMOVE_DIR: 1 << 4,
  REMOVE_FILE: 1 << 5,
  MAKE_CHAR: 1 << 6,
  MAKE_DIR: 1 << 7,
  MAKE_REG: 1 << 8,
  MAKE_SOCK: 1 << 9,
  MAKE_FIFO: 1 << 10,
  MAKE_BLOCK: 1 << 11,
  MAKE_SYM: 1 << 12,
  REFER: 1 << 13, // ABI 2
  TRUNCATE: 1 << 14, // ABI 3
  IOCTL_DEV: 1 << 15, // ABI 5
} as const

/** Landlock network rights (`LANDLOCK_ACCESS_NET_*`, ABI 4). */
export const NET = { BIND_TCP: 1, CONNECT_TCP: 2 } as const

/** Landlock scopes (`LANDLOCK_SCOPE_*`, ABI 6). */
export const SCOPE = { ABSTRACT_UNIX_SOCKET: 1, SIGNAL: 2 } as const

/** The rights that apply to a non-directory: a rule on a file carrying any other right is EINVAL. */
export const FILE_RIGHTS = FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV

/** The highest ABI whose rights cordon knows (newer kernels are driven at this level). */
export const KNOWN_ABI = 7

/** What one access word grants, in Landlock rights. */
export const ACCESS_RIGHTS: Readonly<Record<FsAccess, number>> = {
  read: FS.READ_FILE | FS.READ_DIR,
  write: FS.WRITE_FILE,
  execute: FS.EXECUTE,
  truncate: FS.TRUNCATE,
  'ioctl-dev': FS.IOCTL_DEV,
  'make-dir': FS.MAKE_DIR,
  'make-reg': FS.MAKE_REG,
  'make-sym': FS.MAKE_SYM,
  'make-fifo': FS.MAKE_FIFO,
  'make-sock': FS.MAKE_SOCK,
  remove: FS.REMOVE_DIR | FS.REMOVE_FILE,
  refer: FS.REFER,
}

/** The filesystem rights a kernel at `abi` can handle (0 below ABI 1). */
export function handledFsFor(abi: number): number {
  if (abi < 1) return 0
  let rights = (1 << 13) - 1 // bits 0..12, ABI 1
  if (abi >= 2) rights |= FS.REFER
  if (abi >= 3) rights |= FS.TRUNCATE
  if (abi >= 5) rights |= FS.IOCTL_DEV
  return rights
}

/** The network rights handled at `abi` for a network policy (none unless denied, and only from ABI 4). */
export function handledNetFor(abi: number, network: 'inherit' | 'deny'): number {
  return abi >= 4 && network === 'deny' ? NET.BIND_TCP | NET.CONNECT_TCP : 0
}

/** The scopes handled at `abi`: always both from ABI 6. */
export function scopedFor(abi: number): number {
  return abi >= 6 ? SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL : 0
}

/** `sizeof(struct landlock_ruleset_attr)` the kernel at `abi` understands. */
export function rulesetAttrSize(abi: number): number {
  if (abi >= 6) return 24
  if (abi >= 4) return 16
  return 8
}

/** The Landlock rights for a list of access words. */
export function rightsFor(access: readonly FsAccess[]): number {
  let rights = 0
  for (const word of access) rights |= ACCESS_RIGHTS[word]
  return rights
}

/** One rule of a ruleset: the path, its rights, and the (dev, ino) it was computed for. */
export interface LandlockRule {
  path: string
  allowed: number
  directory: boolean
  dev: number
  ino: number
  /** Why it is in the ruleset: read-everywhere, a writable grant, or a device. */
  origin: 'read' | 'writable' | 'device'
}

/** Everything needed to build one ruleset, computed purely from grants and what the paths are. */
export interface LandlockRulesetPlan {
  abi: number
  handledFs: number
  handledNet: number
  scoped: number
  attrSize: number
  rules: LandlockRule[]
  /** Cache key: ABI, handled masks, and every rule's path, (dev, ino) and rights. */
  key: string
}

/** What a path is, as far as a rule cares; undefined when it does not exist. */
export type PathInspector = (path: string) => { dev: number; ino: number; directory: boolean } | undefined

/** Stats a path (following symlinks, as `open(O_PATH)` does). */
export const statPath: PathInspector = (path) => {
  try {
    const st = fs.statSync(path, { throwIfNoEntry: false })
    if (!st) return undefined
    return { dev: st.dev, ino: st.ino, directory: st.isDirectory() }
  } catch {
    return undefined
  }
}

/**
 * The ruleset for `grants` at `abi`: read/execute on `/`, the writable grants, the devices.
 * Rights are cut to what the ABI handles, and to file rights on non-directories; device creation
 * is handled and never granted. A missing device is skipped; a missing writable path throws.
 */
export function planRuleset(
  grants: SandboxGrants,
  abi: number,
  inspect: PathInspector = statPath,
): LandlockRulesetPlan {
  const level = Math.min(abi, KNOWN_ABI)
  const handledFs = handledFsFor(level)
  const never = FS.MAKE_CHAR | FS.MAKE_BLOCK
  const entries: Array<{ path: string; access: readonly FsAccess[]; origin: LandlockRule['origin'] }> = [
    { path: grants.read.path, access: grants.read.access, origin: 'read' },
    ...grants.writable.map((w) => ({ path: w.path, access: w.access, origin: 'writable' as const })),
    ...grants.devices.map((d) => ({ path: d.path, access: d.access, origin: 'device' as const })),
  ]
  const rules: LandlockRule[] = []
  const missing: string[] = []
  for (const entry of entries) {
    const info = inspect(entry.path)
    if (!info) {
      if (entry.origin !== 'device') missing.push(entry.path)
      continue
    }
    let allowed = rightsFor(entry.access) & handledFs & ~never
    if (!info.directory) allowed &= FILE_RIGHTS
    if (allowed === 0) continue
    rules.push({
      path: entry.path,
      allowed,
      directory: info.directory,
      dev: info.dev,
      ino: info.ino,
      origin: entry.origin,
    })
  }
  if (missing.length > 0) {
    throw new InvalidRequestError(
      missing.map((p) => `${p}: a granted root does not exist (a writable root is never skipped)`),
      { context: 'cannot build the Landlock ruleset' },
    )
  }
  const handledNet = handledNetFor(level, grants.network)
  const scoped = scopedFor(level)
  const key = [
    `abi=${level}`,
    `fs=${handledFs}`,
    `net=${handledNet}`,
    `scoped=${scoped}`,
    ...rules.map((r) => `${r.dev}:${r.ino}:${r.allowed}:${r.path}`),
  ].join('|')
  return { abi: level, handledFs, handledNet, scoped, attrSize: rulesetAttrSize(level), rules, key }
}

/** The effect classes the Landlock ruleset alone governs at `abi` (seccomp adds metadata and non-TCP network). */
export function landlockGoverns(abi: number): { content: boolean; names: boolean; tcp: boolean; signals: boolean } {
  return {
    // writes, truncation (ABI 3) and device ioctls (ABI 5)
    content: abi >= 5,
    // make/remove from ABI 1; rename and link across directories (REFER) from ABI 2
    names: abi >= 2,
    tcp: abi >= 4,
    signals: abi >= 6,
  }
}

/** The effect classes a mode promises, plus `network` when the policy denies it. */
export function promisedClasses(network: 'inherit' | 'deny'): EffectClass[] {
  return network === 'deny' ? ['content', 'names', 'metadata', 'network'] : ['content', 'names', 'metadata']
}

/** The part of the addon the ruleset builder uses. */
export interface LandlockSyscalls {
  landlockCreateRuleset(handledFs: number, handledNet: number, scoped: number, attrSize: number): number
  landlockAddPathRule(rulesetFd: number, path: string, allowed: number): number
  closeFd(fd: number): void
}

/** A ruleset could not be built (the kernel refused a step): errno and the step. */
export class RulesetBuildError extends Error {
  override readonly name = 'RulesetBuildError'
  constructor(
    readonly step: 'create' | 'add-rule',
    readonly errno: number,
    readonly path?: string,
  ) {
    super(`landlock ruleset ${step} failed: errno ${errno}${path === undefined ? '' : ` (${path})`}`)
  }
}

/** Builds the ruleset fd for a plan; the caller owns the fd. */
export function buildRuleset(plan: LandlockRulesetPlan, sys: LandlockSyscalls): number {
  const fd = sys.landlockCreateRuleset(plan.handledFs, plan.handledNet, plan.scoped, plan.attrSize)
  if (fd < 0) throw new RulesetBuildError('create', -fd)
  for (const rule of plan.rules) {
    const rc = sys.landlockAddPathRule(fd, rule.path, rule.allowed)
    if (rc !== 0) {
      sys.closeFd(fd)
      throw new RulesetBuildError('add-rule', rc, rule.path)
    }
  }
  return fd
}

/** Options for a RulesetCache. */
export interface RulesetCacheOptions {
  /** Most rulesets kept open; default 16. */
  capacity?: number
  /** How long an evicted fd stays open before it is closed (ms); default 30 s. */
  retireAfterMs?: number
}

/** An LRU of built ruleset fds, keyed by the plan's key (ABI, masks, (dev, ino) and rights of every rule). */
export class RulesetCache {
  private readonly entries = new Map<string, number>()
  private readonly retiring = new Set<number>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly capacity: number
  private readonly retireAfterMs: number

  constructor(
    private readonly sys: LandlockSyscalls,
    options: RulesetCacheOptions = {},
  ) {
    this.capacity = Math.max(1, options.capacity ?? 16)
    this.retireAfterMs = options.retireAfterMs ?? 30_000
  }

  /** The number of rulesets held open (cached plus retiring). */
  get openFds(): number {
    return this.entries.size + this.retiring.size
  }

  /** The fd for `plan`, built on a miss; the most recently used entry moves to the back. */
  get(plan: LandlockRulesetPlan): number {
    const hit = this.entries.get(plan.key)
    if (hit !== undefined) {
      this.entries.delete(plan.key)
      this.entries.set(plan.key, hit)
      return hit
    }
    const fd = buildRuleset(plan, this.sys)
    this.entries.set(plan.key, fd)
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string
      const old = this.entries.get(oldest) as number
      this.entries.delete(oldest)
      this.retire(old)
    }
    return fd
  }

  private retire(fd: number): void {
    if (this.retireAfterMs <= 0) {
      this.sys.closeFd(fd)
      return
    }
    this.retiring.add(fd)
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      if (this.retiring.delete(fd)) this.sys.closeFd(fd)
    }, this.retireAfterMs)
    timer.unref()
    this.timers.add(timer)
  }

  /** Closes every fd, cached and retiring. */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    for (const fd of this.retiring) this.sys.closeFd(fd)
    this.retiring.clear()
    for (const fd of this.entries.values()) this.sys.closeFd(fd)
    this.entries.clear()
  }
}
