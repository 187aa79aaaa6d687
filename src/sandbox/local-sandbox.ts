/**
 * LocalSandbox: the sandbox floor's face. It probes once (cached), then turns a spawn spec and a
 * policy into the same spec carrying its confinement plan (plan.ts) — or throws
 * SANDBOX_UNAVAILABLE. It never hands back an unconfined spec for a confined mode, and
 * `danger-full-access` never asks a backend.
 *
 * Each session gets a private temp dir (0700, under os.tmpdir()), granted writable in every
 * confined mode and exported as TMPDIR; the host /tmp itself is never writable. `dispose()`
 * removes those dirs and closes every ruleset fd (a spec confined before then fails closed).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { BackendCapability, SandboxBackendName, SandboxCapabilities } from '../policy/backends.js'
import { SANDBOX_BACKENDS } from '../policy/backends.js'
import { errnoName, SandboxUnavailableError } from '../policy/errors.js'
import { grantsFor, type SandboxGrants } from '../policy/grants.js'
import {
  isConfinedMode,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  type SandboxPolicy,
} from '../policy/vocabulary.js'
import { helperPath, loadNative, type NativeAddon } from '../subprocess/native.js'
import type { SubprocessSpawnSpec, SubprocessTerminalSpawnSpec } from '../subprocess/types.js'
import { bubblewrapSpec, landlockSpec } from './confine-spec.js'
import { type ConfinedTerminal, confineTerminal } from './confine-terminal.js'
import { accountFor, type BackendFacts } from './enforcement.js'
import { RulesetBuildError, statPath } from './landlock.js'
import { bubblewrapPlan, type ConfinementPlan, landlockPlan, type PlanHost } from './plan.js'
import { probeBackends } from './probe.js'
import { landlockHost } from './probe-landlock.js'
import { ReadView } from './read-view.js'
import { checkRoots, RootPins } from './roots.js'
import { type RulesetHandle, RulesetCache } from './ruleset-cache.js'
import { type BackendChoice, selectBackend } from './select.js'

/** How many policies' plans are remembered. */
const PLAN_MEMO_SIZE = 64

/** Places a Landlock-confined command can never open (names stay listable). */
const ALWAYS_CLOSED: readonly string[] = ['/dev']

/** Options for LocalSandbox.create. */
export interface LocalSandboxOptions {
  /** The backend chain, in preference order; default every backend of this platform. */
  backends?: readonly SandboxBackendName[]
  /** Use these verdicts instead of probing (tests, or a harness that probed elsewhere). */
  capabilities?: SandboxCapabilities
  /** Most Landlock rulesets kept open; default 16. */
  rulesetCacheSize?: number
  /** The PATH the probe searches for `bwrap`; default `process.env.PATH`. */
  searchPath?: string | undefined
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
  /** The plan the spec carries (absent only for `danger-full-access`). */
  plan?: ConfinementPlan
}

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
    namespaces: { ipc: ns?.ipc === true && (uid0 || deny), net: ns?.net === true && deny },
    uid0,
  }
}

/** Confines spawn specs to sandbox policies on this host. */
export class LocalSandbox {
  private readonly tempDirs = new Map<string, string>()
  private readonly plans = new Map<string, PlanMemo>()
  private readonly views = new Map<string, ReadView>()
  private readonly pins = new RootPins()
  private readonly rulesets: RulesetCache | undefined
  private disposed = false

  private constructor(
    /** What the probe found, per backend. */
    readonly capabilities: SandboxCapabilities,
    private readonly native: NativeAddon | undefined,
    options: LocalSandboxOptions,
  ) {
    if (native) this.rulesets = new RulesetCache(native, { capacity: options.rulesetCacheSize ?? 16 })
  }

  /** Probes the chain once (cached per process) and returns a sandbox; never throws for an unusable backend. */
  static async create(options: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const chain = options.backends ?? SANDBOX_BACKENDS
    const capabilities = options.capabilities ?? (await probeBackends(chain, { searchPath: options.searchPath }))
    let native: NativeAddon | undefined
    if (capabilities.chain.some((name) => capabilities.backends[name]?.usable)) {
      try {
        native = loadNative()
      } catch {
        native = undefined
      }
    }
    return new LocalSandbox(capabilities, native, options)
  }

  /** The backend and account `policy` gets here; throws SandboxUnavailableError when none fits. */
  choose(policy: SandboxPolicy): BackendChoice {
    return selectBackend(this.capabilities, policy, (name, capability) =>
      accountFor(name, factsOf(name, capability, policy), policy),
    )
  }

  /**
   * The plan for `policy` (undefined for `danger-full-access`, which no backend is asked for):
   * the backend chosen, what it governs, and every rule it applies. Throws SandboxUnavailableError
   * when nothing can enforce the policy, InvalidRequestError for refused roots, RootChangedError
   * for a root of this session that was replaced since it was first used.
   */
  plan(policy: SandboxExecutionPolicy): ConfinementPlan | undefined {
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
      this.pins.check(policy.sessionId, memo.plan.grants)
      return memo.plan
    }
    const choice = this.choose(confined)
    const native = this.native
    if (!native) throw new SandboxUnavailableError(policy.mode, { reason: 'the native addon is not loaded' })
    const tempDir = this.sessionTempDir(policy.sessionId)
    const view = choice.backend === 'landlock' ? this.viewFor(confined) : undefined
    const snapshot = view?.current()
    const grants = grantsFor(policy, { tempDir })
    checkRoots(confined, grants)
    this.pins.check(policy.sessionId, grants)
    const host = this.hostFor(choice, native)
    const plan =
      choice.backend === 'landlock'
        ? landlockPlan(confined, grants, host, snapshot ?? { epoch: 0, entries: [] })
        : bubblewrapPlan(confined, grants, host, { setuid: isSetuid(choice.capability.executable) })
    this.plans.delete(key)
    this.plans.set(key, { plan, view, writable: writableInodes(grants) })
    if (this.plans.size > PLAN_MEMO_SIZE) this.plans.delete(this.plans.keys().next().value as string)
    return plan
  }

  /** Whether a memoised plan still describes the host: its writable paths, and its read view's epoch. */
  private stillCurrent(memo: PlanMemo): boolean {
    if (memo.view !== undefined && memo.view.current().epoch !== memo.plan.viewEpoch) return false
    return memo.writable.every((w) => {
      const info = statPath(w.path)
      return info !== undefined && info.dev === w.dev && info.ino === w.ino
    })
  }

  /** The spec confined to `policy` (the runtime runs it as is); throws SandboxUnavailableError when no backend fits. */
  confine(spec: SubprocessSpawnSpec, policy: SandboxExecutionPolicy): ConfinedSpawn {
    const plan = this.plan(policy)
    if (plan === undefined) {
      const { confinement: _ignored, ...bare } = spec
      return { spec: bare, backend: 'none' }
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
    return out
  }

  /** The terminal spec confined to `policy` for spawnTerminal (see confine-terminal.ts); fails closed like confine(). */
  confineTerminal(spec: SubprocessTerminalSpawnSpec, policy: SandboxExecutionPolicy): ConfinedTerminal {
    const planner = {
      capabilities: this.capabilities,
      // cordon-exec builds the ruleset itself; building it here too (cached) refuses one the
      // kernel would refuse before anything starts, exactly as confine() does.
      plan: (p: SandboxExecutionPolicy) => {
        const plan = this.plan(p)
        if (plan) this.rulesetFor(plan)
        return plan
      },
    }
    return confineTerminal(planner, spec, policy)
  }

  private rulesetFor(plan: ConfinementPlan): RulesetHandle | undefined {
    if (plan.ruleset === undefined) return undefined
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

  private hostFor(choice: BackendChoice, native: NativeAddon): PlanHost {
    const cap = choice.capability
    return landlockHost(native, {
      abi: cap.abi ?? 0,
      seccomp: cap.seccomp === true,
      supervisor: cap.supervisor === true,
      namespaces: choice.backend === 'landlock' && cap.namespaces?.net === true,
    })
  }

  /** The read view for a policy's closed places (/dev, and its hidden paths). */
  private viewFor(policy: SandboxPolicy): ReadView {
    const closed = [...ALWAYS_CLOSED, ...(policy.hiddenPaths ?? [])].sort()
    const key = closed.join('\0')
    let view = this.views.get(key)
    if (!view) {
      view = new ReadView(closed)
      this.views.set(key, view)
    }
    return view
  }

  /** The private temp dir of a session (created on first use, recreated if removed behind our back). */
  private sessionTempDir(sessionId: string | undefined): string {
    const key = sessionId ?? ''
    const existing = this.tempDirs.get(key)
    if (existing !== undefined && fs.existsSync(existing)) return existing
    const label = sessionId === undefined ? 'anon' : sessionId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `cordon-tmp-${label}-`)))
    fs.chmodSync(dir, 0o700)
    this.tempDirs.set(key, dir)
    return dir
  }

  /** The number of Landlock ruleset fds held (for leak checks). */
  get openRulesets(): number {
    return this.rulesets?.openFds ?? 0
  }

  /** Removes the sessions' temp dirs and closes every ruleset fd; confine() refuses afterwards. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    this.rulesets?.clear()
    this.plans.clear()
    for (const view of this.views.values()) view.close()
    this.views.clear()
    const dirs = [...this.tempDirs.values()]
    this.tempDirs.clear()
    await Promise.all(dirs.map((d) => fs.promises.rm(d, { recursive: true, force: true })))
  }
}

/** A plan remembered for its policy, with what makes it stale. */
interface PlanMemo {
  plan: ConfinementPlan
  view: ReadView | undefined
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
