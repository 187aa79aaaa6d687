/**
 * A sandbox's session state: each session's private dirs in cordon's private layout
 * (src/subprocess/private-dirs/layout.ts: `tmp/`, granted writable in every confined mode and exported
 * as TMPDIR; `spill/`, readable by the session's commands), the package caches, whom a command
 * runs as, the read views, the pinned roots, the plans remembered per policy, and the Landlock
 * ruleset fds. `dispose()` removes the session dirs and closes every fd.
 */
import fs from 'node:fs'
import path from 'node:path'
import { DEFAULT_RULESET_CACHE_SIZE, PLAN_MEMO_SIZE } from '../policy/defaults.js'
import { errnoName, SandboxUnavailableError } from '../policy/errors.js'
import { grantsFor, type SandboxGrants } from '../policy/grants.js'
import type { SandboxPolicy } from '../policy/vocabulary.js'
import type { NativeAddon } from '../subprocess/native.js'
import {
  createSessionDirs,
  type PrivateOwner,
  privateParent,
  privateSubdir,
  type SessionDirs,
} from '../subprocess/private-dirs/layout.js'
import { removeTree } from '../subprocess/private-dirs/remove-tree.js'
import { detachTemp, resizeTemp, tempMountRefusal } from '../subprocess/private-dirs/temp-mount.js'
import { effectiveLimits, hostBounds } from './confinement/bounds.js'
import { withPrivateDirs } from './confinement/private-dirs.js'
import type { HandedRuleset } from '../subprocess/types.js'
import { backendOf, type BackendPlan } from './backend.js'
import type { ShieldFacts } from './confinement/account.js'
import type { ConfinementPlan } from './confinement/plan.js'
import type { PlanRequest } from './confinement/request.js'
import { checkRoots, RootPins } from './roots.js'
import { type RulesetHandle, RulesetCache } from './ruleset/cache.js'
import { buildRuleset, RulesetBuildError, statPath } from './ruleset/landlock.js'
import { type RunAs, reachableBy, runAsFor } from './run-as.js'
import { cacheEnvFor, hostCacheDirs } from './view/package-caches.js'
import { passwdHome, viewPlaces } from './view/places.js'
import { hostPrograms } from './view/host-programs.js'
import { checkOwnState, ownStatePlaces } from './view/own-state.js'
import { type ProtectedSet, protectedSetCurrent, protectedSetFor } from './view/protected-paths.js'
import { ReadView, type ReadViewSnapshot, within } from './view/read-view.js'

const NO_PROTECTED: ProtectedSet = { paths: [], parents: [], stamps: [] }

/** How many entries a session dir may hold for dispose to remove it synchronously. */
const SMALL_TREE_ENTRIES = 64

/** A plan remembered for its policy, with what makes it stale. */
interface PlanMemo {
  plan: BackendPlan
  view: ReadView
  protectedSet: ProtectedSet
  /** Every writable path (temp dir included) and bound socket, and the inode it was when planned. */
  bound: Array<{ path: string; dev: number; ino: number }>
}

/** One policy made concrete for this session: everything a backend plans from but the backend's own capability. */
export type SessionRequest = Omit<PlanRequest, 'capability'>

/** The state a LocalSandbox keeps between plans, and what it must release at dispose. */
export class SandboxSession {
  private readonly sessions = new Map<string, SessionDirs>()
  private readonly plans = new Map<string, PlanMemo>()
  private readonly views = new Map<string, ReadView>()
  private readonly pins = new RootPins()
  private readonly rulesets: RulesetCache | undefined
  /** Per plan, the ruleset the next terminal inherits, built ahead (close-on-exec; closed at dispose). */
  private readonly spareRulesets = new Map<string, number>()
  disposed = false

  constructor(
    readonly native: NativeAddon | undefined,
    /** The environment hidden paths, socket masks and the private layout are read from. */
    readonly env: NodeJS.ProcessEnv,
    rulesetCacheSize: number | undefined,
  ) {
    if (native) this.rulesets = new RulesetCache(native, { capacity: rulesetCacheSize ?? DEFAULT_RULESET_CACHE_SIZE })
  }

  /**
   * The plan remembered for `key` while it still describes the host (one stat per writable path,
   * the temp dir included, and the read view's epoch); its roots checked against this session's pins.
   */
  remembered(key: string, policy: SandboxPolicy & { sessionId?: string | undefined }): BackendPlan | undefined {
    const memo = this.plans.get(key)
    if (!memo || !stillCurrent(memo)) return undefined
    this.pins.check(policy.sessionId, memo.plan.grants, policy)
    return memo.plan
  }

  /** Remembers `plan` for `key` (the oldest of more than PLAN_MEMO_SIZE is forgotten). */
  remember(key: string, plan: BackendPlan, request: SessionRequest): void {
    const old = this.plans.get(key)
    if (old !== undefined && old.plan !== plan) releasePlan(old.plan)
    this.plans.delete(key)
    this.plans.set(key, {
      plan,
      view: request.view,
      bound: boundInodes(request.grants, plan),
      protectedSet: request.protectedSet,
    })
    if (this.plans.size > PLAN_MEMO_SIZE) {
      const oldest = this.plans.keys().next().value as string
      releasePlan(this.plans.get(oldest)?.plan)
      this.plans.delete(oldest)
    }
  }

  /**
   * `policy` made concrete here: whom it runs as, the session's dirs and caches, the grants (roots
   * checked and pinned), the read view, the protected set and what the accounts need of them.
   */
  request(policy: SandboxPolicy & { sessionId?: string | undefined }): SessionRequest {
    const runAs = runAsFor(policy, process.getuid?.())
    const owner = runAs && { uid: runAs.uid, gid: runAs.gid, home: runAs.home }
    const tempBytes = effectiveLimits(policy.limits, hostBounds()).tempBytes
    const session = withPrivateDirs(policy.mode, () => this.dirsFor(policy.sessionId, owner, tempBytes))
    const caches = withPrivateDirs(policy.mode, () => this.cachesFor(policy, session, owner))
    const grants = grantsFor(policy, { tempDir: session.tmp, readable: [session.spill], caches: caches.dirs })
    checkRoots(policy, grants, [runAs?.home, passwdHome()])
    // <parent>/sessions/<session>: the parent in use, besides every candidate.
    checkOwnState(grants, ownStatePlaces(this.env, owner, path.dirname(path.dirname(session.dir))))
    this.pins.check(policy.sessionId, grants, policy)
    const view = this.viewFor(policy, owner, grants)
    const snapshot = view.current(true)
    const protectedSet = policy.mode === 'workspace-write' ? protectedSetFor(policy, grants) : NO_PROTECTED
    return {
      policy,
      grants,
      native: this.native,
      view,
      snapshot,
      shield: shieldOf(view.placeCount, snapshot, grants, protectedSet),
      protectedSet,
      session,
      runAs,
      owner,
      env: { ...caches.env, ...runtimeEnv(session, this.env, grants), ...(runAs ? runAsEnv(runAs, session) : {}) },
      hostEnv: this.env,
      // bwrap runs as the owner then: a place the owner cannot reach needs no mount.
      reachable: (p) => owner === undefined || reachableBy(p, owner),
    }
  }

  /**
   * The private dirs of a session (created on first use, recreated if removed behind our back). A
   * policy with `tempBytes` gets the session's bounded dirs: its TMPDIR a tmpfs of that size where
   * the host can mount one (resized when a policy asks another size), apart from the unbounded one.
   */
  private dirsFor(sessionId: string | undefined, owner: PrivateOwner | undefined, tempBytes?: number): SessionDirs {
    const bounded = tempBytes !== undefined && tempMountRefusal() === undefined
    const key = `${sessionId ?? ''}\0${owner?.uid ?? ''}${bounded ? '\0bounded' : ''}`
    const existing = this.sessions.get(key)
    if (existing !== undefined && [existing.tmp, existing.spill, existing.shm].every((d) => fs.existsSync(d))) {
      if (existing.tempBytes !== undefined && tempBytes !== undefined && tempBytes !== existing.tempBytes) {
        if (!resizeTemp(existing.mem, tempBytes))
          throw new SandboxUnavailableError('read-only', {
            reason: `the session's TMPDIR and /dev/shm hold more than limits.tempBytes (${tempBytes} bytes) allows: it cannot shrink to that`,
          })
        existing.tempBytes = tempBytes
      }
      return existing
    }
    const dirs = createSessionDirs(sessionId ?? 'anon', this.env, owner, bounded ? tempBytes : undefined)
    this.sessions.set(key, dirs)
    return dirs
  }

  /** The cache dirs a policy's runs may write, and the environment that points the package managers there. */
  private cachesFor(
    policy: SandboxPolicy,
    session: SessionDirs,
    owner: PrivateOwner | undefined,
  ): { dirs: string[]; env: Record<string, string> } {
    if (policy.mode === 'read-only') return { dirs: [], env: cacheEnvFor(path.join(session.tmp, '.cache')) }
    if (policy.cacheRoots === 'host' && owner === undefined) {
      // Never a grant over cordon's state (every parent candidate) or a program the host runs.
      const avoid = [
        ...ownStatePlaces(this.env, owner, privateParent(this.env)).map((p) => p.path),
        ...hostPrograms(undefined).map((p) => p.path),
      ]
      return { dirs: hostCacheDirs(this.env.HOME, avoid), env: {} }
    }
    const dir = privateSubdir('cache', this.env, owner)
    return { dirs: [dir], env: cacheEnvFor(dir) }
  }

  /** The read view for a policy's hidden places (/dev for Landlock, cordon's private dir, the policy's set). */
  private viewFor(policy: SandboxPolicy, owner: PrivateOwner | undefined, grants: SandboxGrants): ReadView {
    const places = viewPlaces(policy, this.env, owner)
    const writable = grants.writable.map((w) => w.path)
    const key = JSON.stringify([places, writable])
    let view = this.views.get(key)
    if (!view) {
      view = new ReadView(places, writable)
      this.views.set(key, view)
    }
    return view
  }

  /** The plan's ruleset, built once and cached; SANDBOX_UNAVAILABLE when the kernel refuses it. */
  rulesetFor(plan: ConfinementPlan): RulesetHandle | undefined {
    if (plan.ruleset === undefined) return undefined
    // Without the addon cordon-exec builds bubblewrap's write domain itself (bubblewrap/spec.ts).
    if (!this.rulesets && backendOf(plan.backend).rulesetInside) return undefined
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

  /**
   * The plan's ruleset as a terminal inherits it: a new ruleset object for each spawn, never the
   * cached one (~0.4 ms for ~180 rules). One per plan is built ahead once a terminal is done
   * (building it as one starts competed with that start: 1.29x -> 1.45x node-pty) and kept
   * close-on-exec until the next spawn takes it; dispose closes it.
   */
  handedRuleset(plan: ConfinementPlan): HandedRuleset | undefined {
    const rules = plan.ruleset
    const native = this.native
    if (rules === undefined || native === undefined || !this.rulesets) return undefined
    const session = this
    const spares = this.spareRulesets
    return {
      get closed() {
        return session.disposed
      },
      fresh: () => {
        const spare = spares.get(rules.key)
        if (spare === undefined) return buildRuleset(rules, native)
        spares.delete(rules.key)
        return spare
      },
      prepareNext: () => {
        if (session.disposed || spares.has(rules.key)) return
        try {
          spares.set(rules.key, buildRuleset(rules, native))
        } catch {
          // the next spawn builds its own, and says why if it cannot
        }
      },
    }
  }

  /** The number of Landlock ruleset fds held (for leak checks). */
  get openRulesets(): number {
    return this.rulesets?.openFds ?? 0
  }

  /** Removes the sessions' dirs and closes every ruleset fd. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    for (const fd of this.spareRulesets.values()) this.native?.closeFd(fd)
    this.spareRulesets.clear()
    this.rulesets?.clear()
    for (const memo of this.plans.values()) releasePlan(memo.plan)
    this.plans.clear()
    for (const view of this.views.values()) view.close()
    this.views.clear()
    const dirs = [...this.sessions.values()].map((d) => d.dir)
    // A tmpfs of TMPDIR and /dev/shm goes first: its contents with it (a run still in it keeps it until it ends).
    for (const d of this.sessions.values()) if (d.tempBytes !== undefined) detachTemp(d.mem)
    this.sessions.clear()
    // Most session dirs hold a few entries: removed at once, without the thread pool (the
    // asynchronous removal's round trips cost a CLI run ~2 ms). Larger trees on the thread pool,
    // never following a link: a command still running (a job the host did not wait for) may
    // swap one in for a directory (subprocess/private-dirs/remove-tree.ts).
    await Promise.all(dirs.filter((d) => !removedSmallTree(d, { left: SMALL_TREE_ENTRIES })).map((d) => removeTree(d)))
  }
}

/** Lets go of what a plan's backend keeps for it (a resident instance ends once its runs have). */
function releasePlan(plan: BackendPlan | undefined): void {
  if (plan !== undefined) backendOf(plan.backend).release?.(plan)
}

/**
 * Whether a memoised plan still describes the host: its writable paths, its protected set, and
 * its read view (by epoch; for bubblewrap, whose mounts hide only what exists, also by the
 * listed directories' mtimes, checked now).
 */
function stillCurrent(memo: PlanMemo): boolean {
  const check = backendOf(memo.plan.backend).viewCheck
  if (check !== 'none' && memo.view.current(check === 'listing').epoch !== (memo.plan as ConfinementPlan).viewEpoch)
    return false
  if (!protectedSetCurrent(memo.protectedSet)) return false
  return memo.bound.every((w) => {
    const info = statPath(w.path)
    return info !== undefined && info.dev === w.dev && info.ino === w.ino
  })
}

/**
 * The inodes a plan holds by path: its writable paths and what bubblewrap binds back by itself
 * (allowed sockets, the spill dir). A socket a host service made anew must not stay the old one
 * in a resident instance.
 */
function boundInodes(grants: SandboxGrants, plan: BackendPlan): PlanMemo['bound'] {
  const kept = (plan as Partial<ConfinementPlan>).mounts?.keep ?? []
  return [...grants.writable.map((w) => w.path), ...kept].flatMap((p) => {
    const info = statPath(p)
    return info === undefined ? [] : [{ path: p, dev: info.dev, ino: info.ino }]
  })
}

/**
 * Whether the session dir `dir` is gone after removing it synchronously: its own subdirs (tmp,
 * spill, shm: a command cannot replace them, their parent is not writable to it) and the files,
 * links and empty directories in them (unlinked or rmdir'd, never followed), at most
 * `budget.left` entries. A directory with something in it (a command's, or the runtime dir
 * tmux used) is left, with the rest, to the recursive removal (false): descending into it by path
 * could follow a link swapped in meanwhile.
 */
function removedSmallTree(dir: string, budget: { left: number }, depth = 0): boolean {
  try {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (--budget.left < 0) return false
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        // Deeper down only an empty directory goes here: rmdir(2) never follows a link.
        if (depth > 0) fs.rmdirSync(full)
        else if (!removedSmallTree(full, budget, depth + 1)) return false
      } else fs.unlinkSync(full)
    }
    fs.rmdirSync(dir)
    return true
  } catch {
    return !fs.existsSync(dir)
  }
}

/** What the accounts need to know about the hidden and protected paths of one plan. */
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
    mustNotAppear: protectedSet.mustNotAppear,
    mustStay: protectedSet.mustStay,
  }
}

/** The per-user runtime variables a session gives its commands, and where each points inside its runtime dir. */
const RUNTIME_VARIABLES: ReadonlyArray<readonly [string, (runtime: string) => string]> = [
  ['XDG_RUNTIME_DIR', (runtime) => runtime],
  // tmux makes tmux-UID (0700) in it, screen wants its own dir 0700 (and makes it when missing).
  ['TMUX_TMPDIR', (runtime) => runtime],
  ['SCREENDIR', (runtime) => path.join(runtime, 'screen')],
]

/**
 * Where per-user sockets and runtime files go (XDG_RUNTIME_DIR, TMUX_TMPDIR, SCREENDIR): the
 * session's runtime dir, since the host's (/run/user/UID, /tmp, /run/screen) are not writable to
 * a confined command. A value the host environment gives that lies in a writable grant is kept.
 */
function runtimeEnv(session: SessionDirs, hostEnv: NodeJS.ProcessEnv, grants: SandboxGrants): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, place] of RUNTIME_VARIABLES) {
    const given = hostEnv[name]
    const kept =
      given !== undefined && path.isAbsolute(given) && grants.writable.some((w) => within(path.resolve(given), w.path))
    env[name] = kept ? given : place(session.runtime)
  }
  return env
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
