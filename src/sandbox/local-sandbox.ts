/**
 * LocalSandbox: the sandbox floor's face. It probes once (cached), then turns a spawn spec and a
 * policy into the same spec carrying its confinement plan (plan.ts) — or throws
 * SANDBOX_UNAVAILABLE. It never hands back an unconfined spec for a confined mode, and
 * `danger-full-access` never asks a backend.
 *
 * Each session gets its own directories in cordon's private layout (src/subprocess/
 * private-dirs/layout.ts): `tmp/`, granted writable in every confined mode and exported as TMPDIR (the
 * host /tmp itself is never writable), and `spill/`, readable by the session's commands, where its
 * runs' spill files go. Every other session's dirs, and the rest of the private layout, are
 * hidden with the policy's hidden set. `dispose()` removes the session dirs and closes every
 * ruleset fd (a spec confined before then fails closed).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { BackendCapability, SandboxBackendName, SandboxCapabilities } from '../policy/backends.js'
import { DEFAULT_RULESET_CACHE_SIZE, PLAN_MEMO_SIZE } from '../policy/defaults.js'
import { errnoName, SandboxUnavailableError } from '../policy/errors.js'
import { grantsFor, type SandboxGrants } from '../policy/grants.js'
import { hiddenPlacesFor } from '../policy/hidden-defaults.js'
import {
  isConfinedMode,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  type SandboxPolicy,
} from '../policy/vocabulary.js'
import { helperPath, loadNative, type NativeAddon } from '../subprocess/native.js'
import { removeTree } from '../subprocess/private-dirs/remove-tree.js'
import {
  createSessionDirs,
  privateEmptyFile,
  privateParent,
  type PrivateOwner,
  privateSubdir,
  type SessionDirs,
  sweepStaleSessions,
} from '../subprocess/private-dirs/layout.js'
import { portableHostCapabilities } from '../subprocess/portable/host.js'
import type { HandedRuleset, SubprocessSpawnSpec, SubprocessTerminalSpawnSpec } from '../subprocess/types.js'
import { bubblewrapSpec, landlockSpec } from './confine-spec.js'
import { type ConfinedTerminal, confineTerminal } from './confine-terminal.js'
import type { BubblewrapMounts } from './bubblewrap.js'
import { accountFor, type BackendFacts, type ShieldFacts } from './enforcement.js'
import { buildRuleset, RulesetBuildError, statPath } from './landlock.js'
import { bubblewrapPlan, type ConfinementPlan, landlockPlan, type PlanHost } from './plan.js'
import { probeBackends } from './probe.js'
import { landlockHost } from './probe-landlock.js'
import { dirsBetween, type ProtectedSet, protectedSetCurrent, protectedSetFor } from './protected-paths.js'
import { DEV_CLOSED, type HiddenMount, ReadView, type ReadViewSnapshot, type ViewPlace, within } from './read-view.js'
import { checkRoots, RootPins } from './roots.js'
import { type RulesetHandle, RulesetCache } from './ruleset-cache.js'
import { cacheEnvFor, hostCacheDirs } from './package-caches.js'
import { type RunAs, reachableBy, runAsFor } from './run-as.js'
import { seatbeltAccount, type SeatbeltPlan, seatbeltPlan, seatbeltSpec } from './seatbelt-plan.js'
import { renderSeatbeltProfile } from './seatbelt.js'
import { type BackendChoice, defaultChain, selectBackend } from './select.js'
import { socketMasksFor } from './socket-masks.js'

/** The /proc files that list the kernel keys of the user, masked under bubblewrap. */
const PROC_KEY_FILES: readonly HiddenMount[] = ['/proc/keys', '/proc/key-users']
  .filter((p) => fs.existsSync(p))
  .map((p) => ({ kind: 'file' as const, path: p }))

const NO_PROTECTED: ProtectedSet = { paths: [], parents: [], stamps: [] }

let swept = false

/** Options for LocalSandbox.create. */
export interface LocalSandboxOptions {
  /** The backend chain, in preference order; default every backend of this platform (select.ts `defaultChain`). */
  backends?: readonly SandboxBackendName[]
  /** Use these verdicts instead of probing (tests, or a harness that probed elsewhere). */
  capabilities?: SandboxCapabilities
  /** Most Landlock rulesets kept open; default 16. */
  rulesetCacheSize?: number
  /** The PATH the probe searches for `bwrap`; default `process.env.PATH`. */
  searchPath?: string | undefined
  /** Keep the probe's verdict on disk between processes (`use`), or probe anew and keep it (`refresh`); default neither. */
  probeCache?: 'use' | 'refresh' | undefined
  /** The environment hidden paths (`~`, `$XDG_RUNTIME_DIR`), socket masks and the private layout are read from; default `process.env`. */
  env?: NodeJS.ProcessEnv | undefined
}

/** A confined spawn: the spec to run as is, which backend confines it, and how completely. */
export interface ConfinedSpawn {
  spec: SubprocessSpawnSpec
  /** `none` only for `danger-full-access`. */
  backend: SandboxBackendName | 'none'
  /** Absent only for `danger-full-access`. */
  enforcement?: SandboxEnforcement
  /** The session's private temp dir (also `spec.env.TMPDIR`). */
  tempDir?: string
  /** The session's spill dir (readable by its commands): a spec's `spill.dir` for its runs. */
  spillDir?: string
  /** The plan the spec carries (absent only for `danger-full-access`). */
  plan?: ConfinementPlan | SeatbeltPlan
}

/** 0 for a backend that gives each session a private /dev/shm (bubblewrap), 1 otherwise. */
const shmRank = (backend: SandboxBackendName) => (backend === 'bubblewrap' ? 0 : 1)

/** The backend facts an account needs, from a usable capability. */
function factsOf(backend: SandboxBackendName, capability: BackendCapability, policy: SandboxPolicy): BackendFacts {
  const uid0 = (process.getuid?.() ?? 0) === 0
  const ns = capability.namespaces
  if (backend === 'bubblewrap') {
    return {
      abi: capability.abi ?? 0,
      seccomp: capability.seccomp === true,
      supervisor: capability.supervisor === true,
      namespaces: { ipc: true, net: policy.network === 'deny' },
      uid0,
    }
  }
  const deny = policy.network === 'deny'
  return {
    abi: Math.min(capability.abi ?? 0, 7),
    seccomp: capability.seccomp === true,
    supervisor: capability.supervisor === true,
    namespaces: {
      ipc: ns?.ipc === true && (uid0 || deny),
      net: ns?.net === true && deny,
      keys: uid0 && ns?.ipc === true,
    },
    uid0,
  }
}

/** Confines spawn specs to sandbox policies on this host. */
export class LocalSandbox {
  private readonly sessions = new Map<string, SessionDirs>()
  private readonly plans = new Map<string, PlanMemo>()
  private readonly views = new Map<string, ReadView>()
  private readonly pins = new RootPins()
  private readonly rulesets: RulesetCache | undefined
  private readonly env: NodeJS.ProcessEnv
  private disposed = false
  /** Per plan, the ruleset the next terminal inherits, built ahead (close-on-exec; closed at dispose). */
  private readonly spareRulesets = new Map<string, number>()

  private constructor(
    /** What the probe found, per backend. */
    readonly capabilities: SandboxCapabilities,
    private readonly native: NativeAddon | undefined,
    options: LocalSandboxOptions,
  ) {
    if (native)
      this.rulesets = new RulesetCache(native, { capacity: options.rulesetCacheSize ?? DEFAULT_RULESET_CACHE_SIZE })
    this.env = options.env ?? process.env
  }

  /** Probes the chain once (cached per process) and returns a sandbox; never throws for an unusable backend. */
  static async create(options: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const chain = options.backends ?? defaultChain()
    const capabilities =
      options.capabilities ??
      (await probeBackends(chain, { searchPath: options.searchPath, diskCache: options.probeCache }))
    let native: NativeAddon | undefined
    if (capabilities.chain.some((name) => capabilities.backends[name]?.usable)) {
      try {
        native = loadNative()
      } catch {
        native = undefined
      }
    }
    if (!swept) {
      swept = true
      try {
        sweepStaleSessions(options.env ?? process.env)
      } catch {
        // No private directory: the first plan says why.
      }
    }
    return new LocalSandbox(capabilities, native, options)
  }

  /** The backend and account `policy` gets here; throws SandboxUnavailableError when none fits. */
  choose(policy: SandboxPolicy, shield?: ShieldFacts): BackendChoice {
    // A command that needs /dev/shm goes first to the backends that give a private one.
    const caps =
      policy.sharedMemory === true
        ? { ...this.capabilities, chain: [...this.capabilities.chain].sort((a, b) => shmRank(a) - shmRank(b)) }
        : this.capabilities
    return selectBackend(caps, policy, (name, capability) =>
      name === 'seatbelt'
        ? seatbeltAccount(policy, renderSeatbeltProfile(grantsFor(policy)), capability.verified === true)
        : accountFor(name, factsOf(name, capability, policy), { ...policy, shield }),
    )
  }

  /**
   * The plan for `policy` (undefined for `danger-full-access`, which no backend is asked for):
   * the backend chosen, what it governs, and every rule it applies. Throws SandboxUnavailableError
   * when nothing can enforce the policy, InvalidRequestError for refused roots, RootChangedError
   * for a root of this session that was replaced since it was first used.
   */
  plan(policy: SandboxExecutionPolicy): ConfinementPlan | SeatbeltPlan | undefined {
    if (this.disposed) throw new Error('LocalSandbox: plan() after dispose()')
    if (!isConfinedMode(policy.mode)) {
      grantsFor(policy) // validates the policy all the same
      return undefined
    }
    const confined = policy as SandboxPolicy
    // The fast path of a repeated policy: one stat per writable path (the temp dir included),
    // so a removed or recreated one is planned anew, and the read view's epoch.
    const key = JSON.stringify(policy)
    const memo = this.plans.get(key)
    if (memo && this.stillCurrent(memo)) {
      this.pins.check(policy.sessionId, memo.plan.grants, confined)
      return memo.plan
    }
    const native = this.native
    const runAs = runAsFor(confined, process.getuid?.())
    const owner = runAs && { uid: runAs.uid, gid: runAs.gid, home: runAs.home }
    const session = this.sessionDirsFor(policy.sessionId, owner)
    const caches = this.cachesFor(confined, session, owner)
    const grants = grantsFor(policy, { tempDir: session.tmp, readable: [session.spill], caches: caches.dirs })
    checkRoots(confined, grants, [runAs?.home, passwdHome()])
    this.pins.check(policy.sessionId, grants, confined)
    const view = this.viewFor(confined, runAs, grants)
    const snapshot = view.current(true)
    const protectedSet = confined.mode === 'workspace-write' ? protectedSetFor(confined, grants) : NO_PROTECTED
    const shield = shieldOf(view.placeCount, snapshot, grants, protectedSet)
    const choice = this.choose(confined, shield)
    // Only Landlock needs the addon here; bubblewrap and Seatbelt plan from host facts alone.
    if (!native && choice.backend === 'landlock')
      throw new SandboxUnavailableError(policy.mode, { reason: 'the native addon is not loaded' })
    const env = { ...caches.env, ...(runAs ? runAsEnv(runAs, session) : {}) }
    let plan: ConfinementPlan | SeatbeltPlan
    if (choice.backend === 'seatbelt') {
      // Seatbelt denies by path: the default hidden set goes in as paths (what exists now, and
      // every exact place whether it exists or not), with cordon's private dir.
      plan = seatbeltPlan(
        confined,
        { ...grants, hiddenPaths: seatbeltHidden(grants.hiddenPaths, view, snapshot) },
        { tempDir: session.tmp, verified: choice.capability.verified },
      )
    } else {
      const host = this.hostFor(choice, native)
      const built =
        choice.backend === 'landlock'
          ? landlockPlan(confined, grants, host, snapshot, shield, env)
          : bubblewrapPlan(
              confined,
              grants,
              host,
              { setuid: isSetuid(choice.capability.executable), hostDevpts: statPath('/dev/pts')?.dev },
              {
                viewEpoch: snapshot.epoch,
                mounts: this.mountsFor(confined, snapshot, protectedSet, session, owner, grants),
                shield,
                env,
              },
            )
      plan = runAs ? asUser(built, runAs) : built
    }
    this.plans.delete(key)
    this.plans.set(key, { plan, view, writable: writableInodes(grants), protectedSet })
    if (this.plans.size > PLAN_MEMO_SIZE) this.plans.delete(this.plans.keys().next().value as string)
    return plan
  }

  /**
   * Whether a memoised plan still describes the host: its writable paths, its protected set, and
   * its read view (by epoch; for bubblewrap, whose mounts hide only what exists, also by the
   * listed directories' mtimes, checked now).
   */
  private stillCurrent(memo: PlanMemo): boolean {
    if (memo.plan.backend !== 'seatbelt') {
      if (memo.view.current(memo.plan.backend === 'bubblewrap').epoch !== memo.plan.viewEpoch) return false
    }
    if (memo.protectedSet.stamps.length > 0 && !protectedSetCurrent(memo.protectedSet)) return false
    return memo.writable.every((w) => {
      const info = statPath(w.path)
      return info !== undefined && info.dev === w.dev && info.ino === w.ino
    })
  }

  /** The cache dirs a policy's runs may write, and the environment that points the package managers there. */
  private cachesFor(
    policy: SandboxPolicy,
    session: SessionDirs,
    owner: PrivateOwner | undefined,
  ): { dirs: string[]; env: Record<string, string> } {
    if (policy.mode === 'read-only') return { dirs: [], env: cacheEnvFor(path.join(session.tmp, '.cache')) }
    if (policy.cacheRoots === 'host' && owner === undefined)
      return { dirs: hostCacheDirs(this.env.HOME, privateParent(this.env)), env: {} }
    const dir = privateSubdir('cache', this.env, owner)
    return { dirs: [dir], env: cacheEnvFor(dir) }
  }

  /** bubblewrap's layered mounts for one plan. */
  private mountsFor(
    policy: SandboxPolicy,
    snapshot: ReadViewSnapshot,
    protectedSet: ProtectedSet,
    session: SessionDirs,
    owner: PrivateOwner | undefined,
    grants: SandboxGrants,
  ): BubblewrapMounts {
    const sockets = socketMasksFor(policy.allowUnixSockets ?? [], this.env)
    // bwrap runs as the owner then: a place the owner cannot reach needs no mount (and gets none).
    const reach = (p: string) => owner === undefined || reachableBy(p, owner)
    const hidden = snapshot.mounts.filter((m) => reach(m.path))
    return {
      anchors: dirsBetween(
        hidden.map((m) => m.path),
        grants.writable.filter((w) => w.kind === 'root' || w.kind === 'extra').map((w) => w.path),
      ),
      // /proc/keys lists the names of the user's keys: bwrap's /proc gets it emptied too.
      hidden: [...hidden, ...PROC_KEY_FILES],
      protected: protectedSet,
      socketMasks: sockets.masks.filter(reach),
      keep: [...sockets.keep.filter(reach), session.spill],
      emptyFile: privateEmptyFile(this.env, owner),
      shm: session.shm,
    }
  }

  /** The spec confined to `policy` (the runtime runs it as is); throws SandboxUnavailableError when no backend fits. */
  confine(spec: SubprocessSpawnSpec, policy: SandboxExecutionPolicy): ConfinedSpawn {
    const plan = this.plan(policy)
    if (plan === undefined) {
      const { confinement: _ignored, ...bare } = spec
      return { spec: bare, backend: 'none' }
    }
    if (plan.backend === 'seatbelt') {
      const out: ConfinedSpawn = {
        spec: seatbeltSpec(spec, plan),
        backend: 'seatbelt',
        enforcement: plan.account.enforcement,
        plan,
      }
      if (plan.tempDir !== undefined) out.tempDir = plan.tempDir
      return out
    }
    const ruleset = this.rulesetFor(plan)
    const out: ConfinedSpawn = {
      spec:
        plan.backend === 'landlock'
          ? landlockSpec(spec, plan, ruleset)
          : bubblewrapSpec(spec, plan, ruleset, this.wrapperTools(plan)),
      backend: plan.backend,
      enforcement: plan.account.enforcement,
      plan,
    }
    if (plan.tempDir !== undefined) out.tempDir = plan.tempDir
    const spill = plan.grants.readable[0]?.path
    if (spill !== undefined) out.spillDir = spill
    return out
  }

  /** The terminal spec confined to `policy` for spawnTerminal (see confine-terminal.ts); fails closed like confine(). */
  confineTerminal(spec: SubprocessTerminalSpawnSpec, policy: SandboxExecutionPolicy): ConfinedTerminal {
    const planner = {
      capabilities: this.capabilities,
      // cordon-exec builds the ruleset itself; building it here too (cached) refuses one the
      // kernel would refuse before anything starts, exactly as confine() does.
      plan: (p: SandboxExecutionPolicy): ConfinementPlan | undefined => {
        const plan = this.plan(p)
        if (plan?.backend === 'seatbelt') {
          throw new SandboxUnavailableError(p.mode, { reason: 'confined terminals are not built for Seatbelt yet' })
        }
        if (plan) this.rulesetFor(plan)
        return plan
      },
      rulesetOf: (plan: ConfinementPlan) => this.handedRuleset(plan),
    }
    return confineTerminal(planner, spec, policy)
  }

  /**
   * The plan's ruleset as a terminal inherits it: a new ruleset object for each spawn, never the
   * cached one (~0.4 ms for ~180 rules). One per plan is built ahead once a terminal is done
   * (building it as one starts competed with that start: 1.29x -> 1.45x node-pty) and kept
   * close-on-exec until the next spawn takes it; dispose closes it.
   */
  private handedRuleset(plan: ConfinementPlan): HandedRuleset | undefined {
    const rules = plan.ruleset
    const native = this.native
    if (rules === undefined || native === undefined || !this.rulesets) return undefined
    const sandbox = this
    const spares = this.spareRulesets
    return {
      get closed() {
        return sandbox.disposed
      },
      fresh: () => {
        const spare = spares.get(rules.key)
        if (spare === undefined) return buildRuleset(rules, native)
        spares.delete(rules.key)
        return spare
      },
      prepareNext: () => {
        if (sandbox.disposed || spares.has(rules.key)) return
        try {
          spares.set(rules.key, buildRuleset(rules, native))
        } catch {
          // the next spawn builds its own, and says why if it cannot
        }
      },
    }
  }

  private rulesetFor(plan: ConfinementPlan): RulesetHandle | undefined {
    if (plan.ruleset === undefined) return undefined
    // Without the addon cordon-exec builds bubblewrap's write domain itself (confine-spec.ts).
    if (!this.rulesets && plan.backend === 'bubblewrap') return undefined
    if (!this.rulesets)
      throw new SandboxUnavailableError(plan.policy.mode, { reason: 'the native addon is not loaded' })
    try {
      return this.rulesets.get(plan.ruleset)
    } catch (error) {
      if (!(error instanceof RulesetBuildError)) throw error
      throw new SandboxUnavailableError(plan.policy.mode, {
        reason: `the kernel refused the Landlock ruleset (${error.step}: ${errnoName(error.errno)}${error.path ? ` on ${error.path}` : ''})`,
        detail: { stage: 'landlock', errno: error.errno },
        cause: error,
      })
    }
  }

  private wrapperTools(plan: ConfinementPlan): { bwrap: string; helper: string } {
    const bwrap = this.capabilities.backends.bubblewrap?.executable
    const helper = helperPath()
    if (bwrap === undefined || helper === undefined) {
      throw new SandboxUnavailableError(plan.policy.mode, {
        reason: 'the probe recorded no bwrap or cordon-exec executable',
      })
    }
    return { bwrap, helper }
  }

  private hostFor(choice: BackendChoice, native: NativeAddon | undefined): PlanHost {
    const cap = choice.capability
    return landlockHost(native ?? { hostCapabilities: portableHostCapabilities }, {
      abi: cap.abi ?? 0,
      seccomp: cap.seccomp === true,
      supervisor: cap.supervisor === true,
      namespaces: choice.backend === 'landlock' && cap.namespaces?.net === true,
    })
  }

  /** The read view for a policy's hidden places (/dev for Landlock, cordon's private dir, the policy's set). */
  private viewFor(policy: SandboxPolicy, runAs: RunAs | undefined, grants: SandboxGrants): ReadView {
    const places = viewPlaces(policy, this.env, runAs)
    const writable = grants.writable.map((w) => w.path)
    const key = JSON.stringify([places, writable])
    let view = this.views.get(key)
    if (!view) {
      view = new ReadView(places, writable)
      this.views.set(key, view)
    }
    return view
  }

  /** The private dirs of a session (created on first use, recreated if removed behind our back). */
  private sessionDirsFor(sessionId: string | undefined, owner: PrivateOwner | undefined): SessionDirs {
    const key = `${sessionId ?? ''}\0${owner?.uid ?? ''}`
    const existing = this.sessions.get(key)
    if (existing !== undefined && [existing.tmp, existing.spill, existing.shm].every((d) => fs.existsSync(d)))
      return existing
    const dirs = createSessionDirs(sessionId ?? 'anon', this.env, owner)
    this.sessions.set(key, dirs)
    return dirs
  }

  /** The number of Landlock ruleset fds held (for leak checks). */
  get openRulesets(): number {
    return this.rulesets?.openFds ?? 0
  }

  /** Removes the sessions' temp dirs and closes every ruleset fd; confine() refuses afterwards. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    for (const fd of this.spareRulesets.values()) this.native?.closeFd(fd)
    this.spareRulesets.clear()
    this.rulesets?.clear()
    this.plans.clear()
    for (const view of this.views.values()) view.close()
    this.views.clear()
    const dirs = [...this.sessions.values()].map((d) => d.dir)
    this.sessions.clear()
    // Most session dirs hold a few entries: removed at once, without the thread pool (the
    // asynchronous removal's round trips cost a CLI run ~2 ms). Larger trees on the thread pool,
    // never following a link: a command still running (a job the host did not wait for) may
    // swap one in for a directory (subprocess/private-dirs/remove-tree.ts).
    await Promise.all(dirs.filter((d) => !removedSmallTree(d, { left: SMALL_TREE_ENTRIES })).map((d) => removeTree(d)))
  }
}

/** How many entries a session dir may hold for dispose to remove it synchronously. */
const SMALL_TREE_ENTRIES = 64

/**
 * Whether the session dir `dir` is gone after removing it synchronously: its own subdirs (tmp,
 * spill, shm: a command cannot replace them, their parent is not writable to it) and the files
 * and links in them (unlinked, never followed), at most `budget.left` entries. A directory a
 * command made inside them is left, with the rest, to the recursive removal (false): descending
 * into it by path could follow a link swapped in meanwhile.
 */
function removedSmallTree(dir: string, budget: { left: number }, depth = 0): boolean {
  try {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (--budget.left < 0) return false
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (depth > 0 || !removedSmallTree(full, budget, depth + 1)) return false
      } else fs.unlinkSync(full)
    }
    fs.rmdirSync(dir)
    return true
  } catch {
    return !fs.existsSync(dir)
  }
}

/** A plan remembered for its policy, with what makes it stale. */
interface PlanMemo {
  plan: ConfinementPlan | SeatbeltPlan
  view: ReadView
  protectedSet: ProtectedSet
  /** Every writable path (temp dir included) and the inode it was when planned. */
  writable: Array<{ path: string; dev: number; ino: number }>
}

function writableInodes(grants: SandboxGrants): PlanMemo['writable'] {
  return grants.writable.flatMap((w) => {
    const info = statPath(w.path)
    return info === undefined ? [] : [{ path: w.path, dev: info.dev, ino: info.ino }]
  })
}

function isSetuid(executable: string | undefined): boolean {
  if (executable === undefined) return false
  try {
    return (fs.statSync(executable).mode & 0o4000) !== 0
  } catch {
    return false
  }
}

/** What the accounts need to know about the hidden and protected paths of one plan. */
/** The hidden places of a policy's read view: /dev (Landlock's), cordon's private dir, the policy's set. */
function viewPlaces(policy: SandboxPolicy, env: NodeJS.ProcessEnv, runAs: RunAs | undefined): ViewPlace[] {
  const places: ViewPlace[] = [
    DEV_CLOSED,
    { name: 'cordon-private', path: privateParent(env) },
    ...hiddenPlacesFor(policy, env),
  ]
  // HOME can say anything (even `/`): the password database's home is hidden too.
  const home = passwdHome()
  if (home !== undefined && home !== env.HOME) places.push(...hiddenPlacesFor(policy, { HOME: home }))
  // A command run as the workspace owner reads what the owner may read: hide the owner's secrets too.
  if (runAs) {
    places.push({ name: 'cordon-private', path: privateParent(env, runAs) })
    if (runAs.home) places.push(...hiddenPlacesFor(policy, { HOME: runAs.home }))
  }
  return places
}

/** Seatbelt denies by path: the policy's own, what of the hidden set exists now, and every exact place. */
function seatbeltHidden(own: readonly string[], view: ReadView, snapshot: ReadViewSnapshot): string[] {
  return [...new Set([...own, ...snapshot.hidden, ...view.exactPlaces()])]
}

/**
 * The paths a Seatbelt profile for `policy` denies besides the policy's own hiddenPaths (the
 * default hidden set and cordon's private dir, expanded from `env`): what `cordon explain
 * --backend seatbelt` renders with, so that it shows the profile a run would get.
 */
export function seatbeltHiddenSet(policy: SandboxPolicy, env: NodeJS.ProcessEnv = process.env): string[] {
  const view = new ReadView(viewPlaces(policy, env, undefined))
  try {
    return seatbeltHidden([], view, view.current())
  } finally {
    view.close()
  }
}

function shieldOf(
  placeCount: number,
  snapshot: ReadViewSnapshot,
  grants: SandboxGrants,
  protectedSet: ProtectedSet,
): ShieldFacts {
  const writable = grants.writable.map((w) => w.path)
  return {
    hiddenPlaces: placeCount,
    // On first use (explain, a denial's remedy): listing what exists is not a run's cost.
    get hidden() {
      return snapshot.hidden
    },
    hiddenInWritable: snapshot.places.filter((p) => writable.some((w) => within(p, w))),
    protectedInWritable: protectedSet.paths.map((p) => p.path),
  }
}

/** The environment of a command run as the workspace owner: their HOME (else the session TMPDIR), USER, LOGNAME. */
function runAsEnv(runAs: RunAs, session: SessionDirs): Record<string, string> {
  const env: Record<string, string> = { HOME: runAs.home ?? session.tmp }
  if (runAs.name !== undefined) {
    env.USER = runAs.name
    env.LOGNAME = runAs.name
  }
  return env
}

/** The plan with the command (Landlock) or bwrap itself (bubblewrap) running as `runAs`. */
function asUser(plan: ConfinementPlan, runAs: RunAs): ConfinementPlan {
  const credentials = { uid: runAs.uid, gid: runAs.gid }
  if (plan.backend === 'landlock') return { ...plan, runAs, steps: { ...plan.steps, credentials } }
  const wrapper = plan.wrapperSteps ?? {
    dropCaps: false,
    dropBounding: false,
    capLast: plan.steps.capLast,
    noNewPrivs: false,
  }
  return { ...plan, runAs, wrapperSteps: { ...wrapper, credentials } }
}

/** The host user's home from the password database (HOME may say otherwise, even `/`). */
function passwdHome(): string | undefined {
  try {
    const home = os.userInfo().homedir
    return home && home !== '/' ? home : undefined
  } catch {
    return undefined
  }
}
