/**
 * The Landlock rights vocabulary and one ruleset's plan: entries (a path and its rights) turned
 * into rules for the kernel's ABI, each pinned to the (device, inode) it was computed for, and the
 * ruleset fd built from them in the host. Which entries a plan has is decided in each backend's
 * plan (sandbox/landlock/plan.ts, sandbox/bubblewrap/plan.ts).
 */
import fs from 'node:fs'
import { InvalidRequestError } from '../../policy/errors.js'
import type { FsAccess } from '../../policy/grants.js'

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

/** Every right that changes the file system (what a domain layered under bubblewrap handles). */
export const WRITE_RIGHTS =
  FS.WRITE_FILE |
  FS.REMOVE_DIR |
  FS.REMOVE_FILE |
  FS.MAKE_CHAR |
  FS.MAKE_DIR |
  FS.MAKE_REG |
  FS.MAKE_SOCK |
  FS.MAKE_FIFO |
  FS.MAKE_BLOCK |
  FS.MAKE_SYM |
  FS.REFER |
  FS.TRUNCATE |
  FS.IOCTL_DEV

/** Read rights of an open subtree: files, listings, execution. */
export const READ_TREE = FS.READ_FILE | FS.READ_DIR | FS.EXECUTE

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

/** The network rights handled: TCP bind and connect when the network is denied without a private namespace (ABI 4+). */
export function handledNetFor(abi: number, network: 'inherit' | 'deny', privateNet: boolean): number {
  return abi >= 4 && network === 'deny' && !privateNet ? NET.BIND_TCP | NET.CONNECT_TCP : 0
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

/** Why a rule is in a ruleset: the read view, a writable grant, or a device. */
export type RuleOrigin = 'read' | 'writable' | 'device'

/** One entry a plan asks for, before the kernel's ABI and the path's kind cut its rights. */
export interface RulesetEntry {
  path: string
  rights: number
  origin: RuleOrigin
  /** Where the same inode is seen inside bubblewrap, when elsewhere (the session's shm dir at /dev/shm). */
  insidePath?: string
  /** What the path was when it was listed (a read-view entry, never a symlink): no second stat. */
  seen?: { dev: number; ino: number; directory: boolean }
}

/** One rule of a ruleset: the path, its rights, and the (dev, ino) it was computed for. */
export interface LandlockRule {
  path: string
  /** The path cordon-exec opens inside bubblewrap, when not `path` (its dev and ino are checked all the same). */
  insidePath?: string
  allowed: number
  directory: boolean
  dev: number
  ino: number
  origin: RuleOrigin
}

/** Everything needed to build one ruleset, computed purely from entries and what the paths are. */
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

/** The masks of one ruleset. */
export interface RulesetMasks {
  abi: number
  handledFs: number
  handledNet: number
  scoped: number
}

/**
 * The ruleset for `entries`: rights cut to what is handled and, on non-directories, to file
 * rights; device creation never granted. A missing device or read-view entry is skipped (it came
 * and went); a missing writable path throws, never silently narrowed.
 */
export function planRuleset(
  entries: readonly RulesetEntry[],
  masks: RulesetMasks,
  inspect: PathInspector = statPath,
): LandlockRulesetPlan {
  const level = Math.min(masks.abi, KNOWN_ABI)
  const never = FS.MAKE_CHAR | FS.MAKE_BLOCK
  const rules: LandlockRule[] = []
  const missing: string[] = []
  for (const entry of entries) {
    const info = entry.seen ?? inspect(entry.path)
    if (!info) {
      if (entry.origin === 'writable') missing.push(entry.path)
      continue
    }
    let allowed = entry.rights & masks.handledFs & ~never
    if (!info.directory) allowed &= FILE_RIGHTS
    if (allowed === 0) continue
    rules.push({
      path: entry.path,
      ...(entry.insidePath === undefined ? {} : { insidePath: entry.insidePath }),
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
  const key = [
    `abi=${level}`,
    `fs=${masks.handledFs}`,
    `net=${masks.handledNet}`,
    `scoped=${masks.scoped}`,
    ...rules.map((r) => `${r.dev}:${r.ino}:${r.allowed}:${r.path}`),
  ].join('|')
  return {
    abi: level,
    handledFs: masks.handledFs,
    handledNet: masks.handledNet,
    scoped: masks.scoped,
    attrSize: rulesetAttrSize(level),
    rules,
    key,
  }
}

/** The part of the addon the ruleset builder uses (each returns >= 0 or -errno). */
export interface LandlockSyscalls {
  landlockCreateRuleset(handledFs: number, handledNet: number, scoped: number, attrSize: number): number
  landlockAddPathRule(rulesetFd: number, path: string, allowed: number): number
  closeFd(fd: number): void
}

/** A ruleset could not be built (the kernel refused a step): errno and the step. */
export class RulesetBuildError extends Error {
  override readonly name = 'RulesetBuildError'
  readonly code = 'LANDLOCK_RULESET'
  constructor(
    readonly step: 'create' | 'add-rule',
    readonly errno: number,
    readonly path?: string,
  ) {
    super(`landlock ruleset ${step} failed: errno ${errno}${path === undefined ? '' : ` (${path})`}`)
  }
}

const ENOENT = 2

/** Builds the ruleset fd for a plan; the caller owns the fd. */
export function buildRuleset(plan: LandlockRulesetPlan, sys: LandlockSyscalls): number {
  const fd = sys.landlockCreateRuleset(plan.handledFs, plan.handledNet, plan.scoped, plan.attrSize)
  if (fd < 0) throw new RulesetBuildError('create', -fd)
  for (const rule of plan.rules) {
    const rc = sys.landlockAddPathRule(fd, rule.path, rule.allowed)
    // A read-view entry that went away since the listing (a temp file beside an ancestor) only
    // narrows what is readable: it is left out. A writable root or device never is.
    if (rc === -ENOENT && rule.origin === 'read') continue
    if (rc !== 0) {
      sys.closeFd(fd)
      throw new RulesetBuildError('add-rule', -rc, rule.path)
    }
  }
  return fd
}

/** The `--landlock`/`--rule` arguments that let cordon-exec build this ruleset itself, each rule checked against its inode. */
export function rulesetArgs(plan: LandlockRulesetPlan): string[] {
  const args = [
    '--landlock',
    `${plan.handledFs.toString(16)}:${plan.handledNet.toString(16)}:${plan.scoped.toString(16)}:${plan.attrSize}`,
  ]
  for (const r of plan.rules)
    args.push('--rule', `${r.allowed.toString(16)}:${r.dev}:${r.ino}:${r.insidePath ?? r.path}`)
  return args
}
