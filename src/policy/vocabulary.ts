/**
 * The sandbox vocabulary: the words every floor shares about confinement.
 *
 * Modes govern file effects only; network is a separate, explicit field (`network`).
 * Each closed set is exported three ways: a readonly tuple (iterate it), a type (check
 * against it), and a zod schema (validate untrusted input with it: schema/vocabulary.ts,
 * kept apart so that this module loads no zod).
 */
import path from 'node:path'

/** Every sandbox mode, narrowest first: the order is the widening ladder. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

/** How much of the file system a confined command may change. */
export type SandboxMode = (typeof SANDBOX_MODES)[number]

/** Every mode the sandbox is asked to enforce (all but `danger-full-access`). */
export const CONFINED_SANDBOX_MODES = ['read-only', 'workspace-write'] as const

/** A mode that a backend must enforce; `danger-full-access` never reaches a backend. */
export type ConfinedSandboxMode = (typeof CONFINED_SANDBOX_MODES)[number]

/** The fail-safe default mode when nothing else is configured. */
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'read-only'

/** How completely a backend enforces what a mode promises. */
export const SANDBOX_ENFORCEMENTS = ['full', 'partial'] as const

/** `full`: every promised effect class held; `partial`: only a subset did. */
export type SandboxEnforcement = (typeof SANDBOX_ENFORCEMENTS)[number]

/**
 * The classes of effect enforcement is counted over: `content` (write, truncate), `names`
 * (create, remove, rename, link), `metadata` (chmod, chown, utime, xattr, inode ioctls),
 * `network` (when the policy denies it), `processes` (signals and process control of anything
 * outside the sandbox: kill, ptrace, prlimit, scheduling, priority), `ipc` (SysV, POSIX message
 * queues), `keyrings`, `terminals` (injection into or reading of other terminals), `lifetime`
 * (nothing the command started outlives the run), `resources` (when the policy sets limits),
 * `secrets` (the hidden paths cannot be read), `protected` (the protected paths inside a
 * writable root cannot be changed, created or renamed away), `memory`, `temp` and `cpu` (when the
 * policy sets `memoryBytes`, `tempBytes`, `cpuSeconds`; `resources` covers the other limits).
 * `signals` is the former name of `processes`, kept as an alias: it is listed wherever
 * `processes` is.
 */
export const EFFECT_CLASSES = [
  'content',
  'names',
  'metadata',
  'network',
  'processes',
  'ipc',
  'keyrings',
  'terminals',
  'lifetime',
  'resources',
  'secrets',
  'protected',
  'signals',
  'memory',
  'temp',
  'cpu',
] as const

/** One class of effect (see {@link EFFECT_CLASSES}). */
export type EffectClass = (typeof EFFECT_CLASSES)[number]

/** The effect classes every confined mode promises, whatever else the policy asks. */
export const FILE_EFFECT_CLASSES = ['content', 'names', 'metadata'] as const satisfies readonly EffectClass[]

/** The classes every confined run promises, besides `network` (deny) and `resources` (limits). */
export const ALWAYS_PROMISED_CLASSES = [
  'content',
  'names',
  'metadata',
  'processes',
  'ipc',
  'keyrings',
  'terminals',
  'lifetime',
] as const satisfies readonly EffectClass[]

/**
 * Optional resource limits of a confined run. A limit the policy names is promised (its class is
 * counted: `resources`, `memory`, `temp`, `cpu`); where the host allows, defaults bound processes
 * and memory anyway (src/policy/defaults.ts), listed in the account but not promised.
 */
export interface ResourceLimits {
  /**
   * Most processes and threads of the run's tree (a pids cgroup where the host can make one; else
   * RLIMIT_NPROC of the run's uid, which does not bind uid 0).
   */
  processes?: number | undefined
  /** Most bytes of address space per process (RLIMIT_AS; Node, the JVM, Go and sanitizers reserve far more than they use). */
  addressSpaceBytes?: number | undefined
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileSizeBytes?: number | undefined
  /** Most memory of the run's tree, page cache included (a memory cgroup; not RLIMIT_AS). */
  memoryBytes?: number | undefined
  /** Most bytes the session's TMPDIR may hold (a size-bounded tmpfs, where one can be mounted). */
  tempBytes?: number | undefined
  /** Most CPU seconds per process (RLIMIT_CPU: SIGXCPU at the limit, SIGKILL a second later). */
  cpuSeconds?: number | undefined
}

/** The effect class each limit is counted in. */
export const LIMIT_CLASSES = {
  processes: 'resources',
  addressSpaceBytes: 'resources',
  fileSizeBytes: 'resources',
  memoryBytes: 'memory',
  tempBytes: 'temp',
  cpuSeconds: 'cpu',
} as const satisfies Record<keyof ResourceLimits, EffectClass>

/** Network policies: `inherit` leaves the host's network alone; `deny` asks the backend to cut it. */
export const NETWORK_POLICIES = ['inherit', 'deny'] as const

/** `inherit` or `deny`: the two network policies that name no host. */
export type NetworkMode = (typeof NETWORK_POLICIES)[number]

/**
 * A network allow-list: the command loses the host's network (as under `deny`) and reaches, through
 * cordon's proxy only, the hosts `allow` names and `deny` does not (host names, `*.` wildcards, IP
 * addresses, each with an optional `:port`; see src/policy/network/host-pattern.ts).
 */
export interface NetworkAllowList {
  allow: readonly string[]
  deny?: readonly string[] | undefined
}

/** Whether a confined command keeps the host's network (`inherit`, the default), loses it, or reaches listed hosts. */
export type NetworkPolicy = NetworkMode | NetworkAllowList

/** Whether `network` takes the host's network away (`deny`, or an allow-list whose only way out is the proxy). */
export function cutsNetwork(network: NetworkPolicy | undefined): boolean {
  return network !== undefined && network !== 'inherit'
}

/** The allow-list of `network`, if it is one. */
export function allowListOf(network: NetworkPolicy | undefined): NetworkAllowList | undefined {
  return typeof network === 'object' ? network : undefined
}

/** How a confined run's namespaces and rules see `network`: an allow-list is cut like `deny`. */
export function networkModeOf(network: NetworkPolicy | undefined): NetworkMode {
  return cutsNetwork(network) ? 'deny' : 'inherit'
}

/**
 * The policy carried on every call. `workspaceRoot` is absolute and canonical (symlinks
 * resolved) and is carried even when the mode does not use it.
 */
export interface SandboxExecutionPolicy {
  /** The mode the command runs under. */
  mode: SandboxMode
  /** Absolute, canonical workspace root (the writable root under `workspace-write`). */
  workspaceRoot: string
  /** Opaque id of the calling session; absent for agentless calls. */
  sessionId?: string | undefined
  /** cordon: extra writable roots under `workspace-write` (absolute, canonical). */
  writableRoots?: readonly string[] | undefined
  /** cordon: `inherit` (default), `deny`, or an allow-list of hosts, enforced where a backend can. */
  network?: NetworkPolicy | undefined
  /**
   * cordon: paths that stay read-only even inside a writable root: absolute, or relative to the
   * workspace root. Added to the defaults (`.git/hooks`, `.git/config` and their submodule and
   * worktree counterparts) unless `protectedDefaults` is false. The installed cordon package is
   * protected whatever this says.
   */
  protectedPaths?: readonly string[] | undefined
  /** cordon: keep the default protected paths (default true). */
  protectedDefaults?: boolean | undefined
  /**
   * cordon: default protected paths to leave writable (absolute, or relative to the workspace
   * root): a default equal to or beneath one is not protected. The policy's own `protectedPaths` stay.
   */
  unprotectedPaths?: readonly string[] | undefined
  /** cordon: absolute paths a confined command may not read, added to the default hidden set. */
  hiddenPaths?: readonly string[] | undefined
  /**
   * cordon: the default hidden set (`profiles/hidden.json`): true (default) keeps it, false
   * drops it, `{ except: [name] }` drops the named entries.
   */
  hiddenDefaults?: boolean | { readonly except: readonly string[] } | undefined
  /**
   * cordon: where package managers (npm, pip, yarn, pnpm, Go, XDG) cache: `confined` (default) is
   * cordon's cache shared by confined runs only (workspace-write; read-only runs cache in their
   * TMPDIR), `host` grants the host's own cache dirs under workspace-write.
   */
  cacheRoots?: 'confined' | 'host' | undefined
  /**
   * cordon: the command needs a writable /dev/shm (POSIX semaphores and shared memory: Python
   * multiprocessing, pytest-xdist). The chain then prefers a backend that gives each session a
   * private one (bubblewrap); Landlock cannot (no mount namespace) and keeps /dev/shm refused.
   */
  sharedMemory?: boolean | undefined
  /**
   * cordon: when a root host's workspace belongs to another uid, run a workspace-write command as
   * that owner (default true; see src/sandbox/run-as.ts). False keeps uid 0 without capabilities.
   */
  runAsOwner?: boolean | undefined
  /** cordon: host unix sockets (absolute paths) a bubblewrap run keeps reachable under its /run masks. */
  allowUnixSockets?: readonly string[] | undefined
  /** cordon: refuse a backend that enforces this policy only `partial`ly. */
  requireEnforcement?: 'full' | undefined
  /** cordon: resource limits of the run (processes, address space, file size, memory, temp space, CPU time). */
  limits?: ResourceLimits | undefined
}

/** The policy a backend's `confine()` accepts: the mode narrowed to a confined one. */
export interface SandboxPolicy extends SandboxExecutionPolicy {
  mode: ConfinedSandboxMode
}

/** Whether `p` is absolute and lexically normal (no `.`/`..`/`//`, no trailing slash). */
export function isNormalAbsolutePath(p: string): boolean {
  return path.isAbsolute(p) && !p.includes('\0') && path.normalize(p) === p && (p === '/' || !p.endsWith('/'))
}

/** Whether `p` is relative, lexically normal and stays beneath where it is resolved (no `..`). */
export function isNormalRelativePath(p: string): boolean {
  return (
    p.length > 0 &&
    !path.isAbsolute(p) &&
    !p.includes('\0') &&
    path.normalize(p) === p &&
    !p.endsWith('/') &&
    p !== '.' &&
    p.split('/').every((part) => part !== '..')
  )
}

/** Whether `value` is one of the three sandbox modes. */
export function isSandboxMode(value: unknown): value is SandboxMode {
  return typeof value === 'string' && (SANDBOX_MODES as readonly string[]).includes(value)
}

/** Whether `mode` is enforced by a backend (every mode but `danger-full-access`). */
export function isConfinedMode(mode: SandboxMode): mode is ConfinedSandboxMode {
  return mode !== 'danger-full-access'
}

/** A class of operations the backend refuses whole, met by a run, and the flags that open it. */
export interface ClosedClassFact {
  /** The class (`shared-memory`, `terminals`, `unix-sockets`, ...). */
  class: string
  /** What the run met, in a person's words (e.g. `sem_open refused: /dev/shm is closed under Landlock`). */
  evidence: string
  /** The `cordon run` flags that open it (e.g. `--shared-memory`, `--backend bubblewrap`). */
  remedy: string
}
