/**
 * Backend vocabulary several floors share: the names, what the probe learned about each, and the
 * account of which effect classes a backend governs for one policy. Types and constants only.
 */
import type { ConfinedSandboxMode, EffectClass, SandboxEnforcement } from './vocabulary.js'

/** The backends cordon can drive on Linux, in preference order (Landlock is the fastest). */
export const SANDBOX_BACKENDS = ['landlock', 'bubblewrap'] as const

/** Every backend cordon knows, on any platform: Linux's, then macOS's Seatbelt. */
export const ALL_SANDBOX_BACKENDS = ['landlock', 'bubblewrap', 'seatbelt'] as const

/** A backend's name. */
export type SandboxBackendName = (typeof ALL_SANDBOX_BACKENDS)[number]

/** Whether one effect class holds for a plan, and how (or why not), in words a person can act on. */
export interface ClassVerdict {
  governed: boolean
  how: string
}

/** Which effect classes a backend governs for one policy, and the verdict. */
export interface EnforcementAccount {
  enforcement: SandboxEnforcement
  /** Every promised class, with its verdict. */
  classes: Partial<Record<EffectClass, ClassVerdict>>
  /** Promised classes that hold. */
  governed: EffectClass[]
  /** Promised classes that do not (empty iff `full`). */
  ungoverned: EffectClass[]
}

/** What the probe learned about one backend. */
export interface BackendCapability {
  backend: SandboxBackendName
  /** The canary was refused what it must be refused: the backend confines on this host. */
  usable: boolean
  /** Why it is not usable (absent when usable). */
  reason?: string
  /** What a person can do to make it usable, or to get `full` where it is `partial`. */
  remedy?: string
  /** Absolute path of the runner executable (`bwrap`), when the backend has one. */
  executable?: string
  /** What `executable` was when checked (subprocess/trusted-program.ts): a run refuses a replaced one. */
  executableIdentity?: ProgramFacts
  /** Programs the probe refused to run (owned by another user, or writable by group or others). */
  refusedPrograms?: { path: string; reason: string }[]
  /** Landlock ABI the kernel offers (absent when unknown). */
  abi?: number
  /** Human-readable version, e.g. `Landlock ABI 7 (driven at 7) + seccomp`. */
  version?: string
  /** Whether the seccomp program loads. */
  seccomp?: boolean
  /** Whether runs get a supervisor outside the sandbox (cordon-exec): the lifetime class. */
  supervisor?: boolean
  /** Private namespaces a run can get here (root, or an unprivileged user namespace). */
  namespaces?: { ipc: boolean; net: boolean; user: boolean }
  /** Enforcement per confined mode with `network: 'inherit'` / `'deny'` (absent when unusable). */
  enforcement?: Record<ConfinedSandboxMode, { inherit: SandboxEnforcement; deny: SandboxEnforcement }>
  /** Effect classes governed per mode, network denied (absent when unusable). */
  governs?: Record<ConfinedSandboxMode, EffectClass[]>
  /** The class accounts per mode and network, with how each class holds or why not. */
  accounts?: Record<ConfinedSandboxMode, { inherit: EnforcementAccount; deny: EnforcementAccount }>
  /** What the canary proved, per check (the probe's evidence). */
  canary?: Record<string, number>
  /** What this backend does not govern, in words a person can act on. */
  limitations: string[]
  /** The probe's wall time (ms). */
  probeMs: number
  /** The runner failure that made it unusable, when a confinement step failed. */
  failure?: { stage: string; errno: number; code: string }
  /** Seatbelt: a canary ran under sandbox-exec on this host (until then the backend is unverified). */
  verified?: boolean
}

/** The spawn path the host's runs take (see subprocess/portable/spawn-path.ts), as the probe reports it. */
export interface SpawnPathFacts {
  path: 'native' | 'portable'
  reason: string
  /** The cordon-exec helper, when one exists. */
  helper?: string
}

/** Every probed backend, in the order they were asked for. */
export interface SandboxCapabilities {
  platform: NodeJS.Platform
  /** The chain probed, in preference order. */
  chain: SandboxBackendName[]
  backends: Partial<Record<SandboxBackendName, BackendCapability>>
  /** The spawn path the probe's canaries (and the host's runs) take. */
  spawnPath?: SpawnPathFacts
}

/** What a program the host runs was when checked (src/subprocess/trusted-program.ts records it). */
export interface ProgramFacts {
  /** Its real path (symlinks resolved). */
  realPath: string
  dev: number
  ino: number
  uid: number
  mode: number
  size: number
  mtimeMs: number
  /** Changed by any write, chmod or chown, and not settable from user space (utime cannot hide a rewrite). */
  ctimeMs: number
}
