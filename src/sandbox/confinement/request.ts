/**
 * What a backend is handed to plan and to confine: everything the face has worked out for one
 * policy (grants, read view, protected set, session dirs, whom the command runs as), so that a
 * backend decides only what is its own.
 */
import type { BackendCapability, SandboxCapabilities } from '../../policy/backends.js'
import type { SandboxGrants } from '../../policy/grants.js'
import type { SandboxPolicy } from '../../policy/vocabulary.js'
import type { NativeAddon } from '../../subprocess/native.js'
import type { PrivateOwner, SessionDirs } from '../../subprocess/private-dirs/layout.js'
import type { RulesetReference } from '../../subprocess/types.js'
import type { ProtectedSet } from '../view/protected-paths.js'
import type { ReadView, ReadViewSnapshot } from '../view/read-view.js'
import type { ShieldFacts } from './account.js'
import type { ConfinementPlan } from './plan.js'

/** The workspace owner a command runs as, when not the host's own user. */
export type RunAsOwner = NonNullable<ConfinementPlan['runAs']>

/** One policy made concrete on this host, ready for a backend to plan. */
export interface PlanRequest {
  policy: SandboxPolicy
  grants: SandboxGrants
  /** The probe's verdict on the chosen backend. */
  capability: BackendCapability
  /** The addon, when loaded (Landlock plans need it; the others plan from host facts alone). */
  native: NativeAddon | undefined
  view: ReadView
  snapshot: ReadViewSnapshot
  shield: ShieldFacts
  protectedSet: ProtectedSet
  session: SessionDirs
  /** Whom the command runs as, when not the host's user (`owner` is the same, as the private layout names it). */
  runAs: RunAsOwner | undefined
  owner: PrivateOwner | undefined
  /** Environment every confined spec gets (the package caches, the owner's HOME). */
  env: Record<string, string>
  /** The environment hidden paths, socket masks and the private layout are read from. */
  hostEnv: NodeJS.ProcessEnv
  /** Whether the command's user can reach `path` at all (a place it cannot reach needs no mount). */
  reachable(path: string): boolean
}

/** What a backend may ask of the sandbox while confining a spec. */
export interface ConfineHost {
  readonly capabilities: SandboxCapabilities
  /** The plan's ruleset, built (and cached) in the host; undefined when it has none. */
  ruleset(plan: ConfinementPlan): RulesetReference | undefined
  /** Whether runs may go to a resident bubblewrap instance (LocalSandboxOptions.residentInstances). */
  readonly resident?: boolean | undefined
}
