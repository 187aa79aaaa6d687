/**
 * The backends behind one interface, in one table: what differs between Landlock, bubblewrap and
 * Seatbelt is a property or a method here, never a comparison of backend names elsewhere. The one
 * module that imports every backend folder.
 */
import type {
  BackendCapability,
  EnforcementAccount,
  SandboxBackendName,
  SandboxCapabilities,
} from '../policy/backends.js'
import type { SandboxPolicy } from '../policy/vocabulary.js'
import type { SpawnPathChoice } from '../subprocess/portable/spawn-path.js'
import type { SubprocessSpawnSpec, SubprocessTerminalSpawnSpec } from '../subprocess/types.js'
import { bubblewrapBackend } from './bubblewrap/backend.js'
import type { HostPrograms } from './bubblewrap/program.js'
import type { ShieldFacts } from './confinement/account.js'
import type { ConfinementPlan } from './confinement/plan.js'
import type { ConfineHost, PlanRequest } from './confinement/request.js'
import { landlockBackend } from './landlock/backend.js'
import { seatbeltBackend } from './seatbelt/backend.js'
import type { SeatbeltPlan } from './seatbelt/plan.js'

/** The plan of any backend. */
export type BackendPlan = ConfinementPlan | SeatbeltPlan

/** What the probe of one backend is told. */
export interface BackendProbeOptions {
  /** Runner executables the caller pinned (bubblewrap/program.ts); else the trusted search path. */
  programs?: HostPrograms | undefined
  /** The spawn path runs take (Landlock needs the native one). */
  spawnPath: SpawnPathChoice
}

/** How a confined terminal runs under a backend (confine-terminal.ts). */
export interface TerminalTraits {
  /** The host hands cordon-exec a ruleset fd built for each spawn (else the rules go on argv). */
  readonly handsRuleset: boolean
  /** cordon-exec init is the host's own child (`--host-pid`: it refuses to start once the host is gone). */
  readonly hostChild: boolean
  /** The argv node-pty runs around `launcher` (cordon-exec init … -- program). */
  argv(
    plan: ConfinementPlan,
    launcher: string[],
    spec: SubprocessTerminalSpawnSpec,
    capabilities: SandboxCapabilities,
  ): string[]
}

/** One sandbox backend: its traits, its account, its plan, its confined spec, its probe. */
export interface SandboxBackend {
  readonly name: SandboxBackendName
  /** Each session gets a private /dev/shm: the chain prefers it for a policy with `sharedMemory`. */
  readonly privateShm: boolean
  /**
   * cordon's package inside a writable root stays read-only (bubblewrap's protected binds,
   * Seatbelt's require-not); Landlock cannot make a subpath of a root read-only. The chain moves
   * a plan whose roots hold the package to a backend that can (src/sandbox/view/host-programs.ts).
   */
  readonly keepsHostProgramsReadOnly: boolean
  /** Planning needs the native addon (the host builds the command's ruleset). */
  readonly plansWithAddon: boolean
  /** How a remembered plan's read view is checked: not at all, by its watched epoch, or listed anew. */
  readonly viewCheck: 'none' | 'epoch' | 'listing'
  /** A Linux backend (cordon-exec, Landlock, seccomp): its plan is a ConfinementPlan, its runs spill into the session, it confines terminals. */
  readonly linux: boolean
  /** Without the addon, cordon-exec inside builds the plan's ruleset from its rules. */
  readonly rulesetInside: boolean
  /** How a confined terminal runs here; absent: not built for this backend. */
  readonly terminal?: TerminalTraits | undefined
  /** What this backend governs of `policy` on a host the probe found `capability`. */
  account(policy: SandboxPolicy, capability: BackendCapability, shield: ShieldFacts | undefined): EnforcementAccount
  /** The plan for one policy made concrete on this host. */
  plan(request: PlanRequest): BackendPlan
  /** The spec confined the way `plan` says (the runtime runs it as is). */
  confine(spec: SubprocessSpawnSpec, plan: BackendPlan, host: ConfineHost): SubprocessSpawnSpec
  /** Lets go of what this backend keeps for `plan` once the sandbox forgets it (a resident instance). */
  release?(plan: BackendPlan): void
  /** Whether the backend really confines on this host, proved by its canary; never throws. */
  probe(options: BackendProbeOptions): Promise<BackendCapability>
}

const BACKENDS: Readonly<Record<SandboxBackendName, SandboxBackend>> = {
  landlock: landlockBackend,
  bubblewrap: bubblewrapBackend,
  seatbelt: seatbeltBackend,
}

/** Whether `plan` is a Linux backend's (see SandboxBackend.linux). */
export function isLinuxPlan(plan: BackendPlan): plan is ConfinementPlan {
  return BACKENDS[plan.backend].linux
}

/** The backend named `name`. */
export function backendOf(name: SandboxBackendName): SandboxBackend {
  return BACKENDS[name]
}
