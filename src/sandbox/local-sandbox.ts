/**
 * LocalSandbox: the sandbox floor's face. It probes once (cached), then turns a spawn spec and a
 * policy into the same spec carrying a confinement plan the native child applies to itself
 * before exec (Landlock), or the spec's argv wrapped in a `bwrap` argv (bubblewrap) — or throws
 * SANDBOX_UNAVAILABLE. It never hands back an unconfined spec for a
 * confined mode, and `danger-full-access` never asks a backend.
 *
 * Under `workspace-write` each session gets a private temp dir (0700, under os.tmpdir()), granted
 * writable and exported as TMPDIR; the host /tmp itself is never writable. `dispose()` removes
 * those dirs and closes every cached ruleset fd.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { errnoName, InvalidRequestError, SandboxUnavailableError } from '../policy/errors.js'
import { grantsFor, type SandboxGrants } from '../policy/grants.js'
import {
  isConfinedMode,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  type SandboxPolicy,
} from '../policy/vocabulary.js'
import { loadNative, type NativeAddon, type NativeConfinementPlan } from '../subprocess/native.js'
import type { SubprocessSpawnSpec } from '../subprocess/types.js'
import { bubblewrapArgv } from './bubblewrap.js'
import { bubblewrapLaunchPlan, createScopeRuleset } from './bubblewrap-probe.js'
import {
  planRuleset,
  RulesetBuildError,
  RulesetCache,
  statPath,
  type LandlockRule,
  type LandlockRulesetPlan,
} from './landlock.js'
import { probeBackends, SANDBOX_BACKENDS, type SandboxBackendName, type SandboxCapabilities } from './probe.js'
import { hostSeccompArch, seccompFilterFor } from './seccomp.js'
import { selectBackend } from './select.js'

/** How many policies' ruleset plans are remembered. */
const PLAN_MEMO_SIZE = 64

/** Whether a fresh stat still names the inode a rule was planned for. */
function sameInode(info: { dev: number; ino: number } | undefined, rule: LandlockRule): boolean {
  return info !== undefined && info.dev === rule.dev && info.ino === rule.ino
}

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
  /** The session's private temp dir (also `spec.env.TMPDIR`), under `workspace-write`. */
  tempDir?: string
}

/** Confines spawn specs to sandbox policies on this host. */
export class LocalSandbox {
  private readonly tempDirs = new Map<string, string>()
  private readonly plans = new Map<string, LandlockRulesetPlan>()
  private scopeFd: number | undefined
  private readonly grantMemo = new Map<string, SandboxGrants>()
  private readonly rulesets: RulesetCache | undefined
  private readonly host: { setpcap: boolean; capLast: number; uid: number } | undefined
  private disposed = false

  private constructor(
    /** What the probe found, per backend. */
    readonly capabilities: SandboxCapabilities,
    private readonly native: NativeAddon | undefined,
    options: LocalSandboxOptions,
  ) {
    if (native) {
      this.rulesets = new RulesetCache(native, { capacity: options.rulesetCacheSize ?? 16 })
      this.host = native.hostCapabilities()
    }
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

  /** The spec confined to `policy` (the runtime runs it as is); throws SandboxUnavailableError when no backend fits. */
  confine(spec: SubprocessSpawnSpec, policy: SandboxExecutionPolicy): ConfinedSpawn {
    if (this.disposed) throw new Error('LocalSandbox: confine() after dispose()')
    const { confinement: _ignored, ...bare } = spec
    if (!isConfinedMode(policy.mode)) {
      grantsFor(policy) // validates the policy all the same
      return { spec: bare, backend: 'none' }
    }
    const confinedPolicy = policy as SandboxPolicy
    const choice = selectBackend(this.capabilities, confinedPolicy)
    const native = this.native
    const arch = hostSeccompArch()
    if (!native || !this.rulesets || !this.host || !arch) {
      throw new SandboxUnavailableError(policy.mode, { reason: 'the native addon is not loaded' })
    }
    const tempDir = policy.mode === 'workspace-write' ? this.sessionTempDir(policy.sessionId) : undefined
    if (choice.backend === 'bubblewrap') {
      const bwrap = choice.capability.executable
      if (bwrap === undefined)
        throw new SandboxUnavailableError(policy.mode, { reason: 'the probe recorded no bwrap executable' })
      const grants = this.grantsFor(policy, tempDir)
      // As under Landlock, a writable root is never skipped: a missing one is the caller's error.
      const missing = grants.writable.filter((w) => !fs.existsSync(w.path))
      if (missing.length > 0) {
        throw new InvalidRequestError(
          missing.map((w) => `${w.path}: a granted root does not exist (a writable root is never skipped)`),
          { context: 'cannot build the bubblewrap argv' },
        )
      }
      const argv = bubblewrapArgv(grants, {
        bwrapPath: bwrap,
        network: policy.network ?? 'inherit',
        tempDir,
        cwd: bare.cwd,
        command: bare.argv,
      })
      const plan = bubblewrapLaunchPlan(
        native,
        choice.capability.seccomp === true,
        choice.capability.landlockScopes ? this.scopeRuleset(native) : undefined,
      )
      const env = tempDir === undefined ? bare.env : { ...bare.env, TMPDIR: tempDir }
      return {
        spec: {
          ...bare,
          argv,
          ...(env === undefined ? {} : { env }),
          confinement: { backend: 'bubblewrap', mode: policy.mode, ...(plan ? { plan } : {}) },
        },
        backend: choice.backend,
        enforcement: choice.enforcement,
        ...(tempDir === undefined ? {} : { tempDir }),
      }
    }
    let rulesetFd: number
    try {
      rulesetFd = this.rulesets.get(this.planFor(policy, tempDir, choice.capability.abi ?? 0))
    } catch (error) {
      if (!(error instanceof RulesetBuildError)) throw error
      throw new SandboxUnavailableError(policy.mode, {
        reason: `the kernel refused the Landlock ruleset (${error.step}: ${errnoName(error.errno)}${error.path ? ` on ${error.path}` : ''})`,
        detail: { stage: 'landlock', errno: error.errno },
        cause: error,
      })
    }
    const plan: NativeConfinementPlan = {
      dropCaps: true,
      dropBounding: this.host.setpcap,
      capLast: this.host.capLast,
      noNewPrivs: true,
      rulesetFd,
      landlockFlags: 0,
      ...(choice.capability.seccomp
        ? { filter: seccompFilterFor({ arch, mode: policy.mode, network: policy.network ?? 'inherit' }) }
        : {}),
    }
    const env = tempDir === undefined ? bare.env : { ...bare.env, TMPDIR: tempDir }
    return {
      spec: {
        ...bare,
        ...(env === undefined ? {} : { env }),
        confinement: { backend: choice.backend, mode: policy.mode, plan },
      },
      backend: choice.backend,
      enforcement: choice.enforcement,
      ...(tempDir === undefined ? {} : { tempDir }),
    }
  }

  /**
   * The ruleset plan for a policy, memoised: a repeated policy costs one stat per writable path
   * (a recreated root has a new inode and gets a new plan), not the grants table and every stat.
   */
  private planFor(policy: SandboxExecutionPolicy, tempDir: string | undefined, abi: number): LandlockRulesetPlan {
    const key = `${abi}\0${tempDir ?? ''}\0${JSON.stringify(policy)}`
    const memo = this.plans.get(key)
    if (memo?.rules.every((r) => r.origin !== 'writable' || sameInode(statPath(r.path), r))) return memo
    const plan = planRuleset(grantsFor(policy, { tempDir }), abi)
    this.plans.delete(key)
    this.plans.set(key, plan)
    if (this.plans.size > PLAN_MEMO_SIZE) this.plans.delete(this.plans.keys().next().value as string)
    return plan
  }

  /** The grants of a policy, memoised (they are pure; a repeated policy skips the realpaths). */
  private grantsFor(policy: SandboxExecutionPolicy, tempDir: string | undefined): SandboxGrants {
    const key = `${tempDir ?? ''}\0${JSON.stringify(policy)}`
    let grants = this.grantMemo.get(key)
    if (grants === undefined) {
      grants = grantsFor(policy, { tempDir })
      this.grantMemo.set(key, grants)
      if (this.grantMemo.size > PLAN_MEMO_SIZE) this.grantMemo.delete(this.grantMemo.keys().next().value as string)
    }
    return grants
  }

  /** The scope-only Landlock ruleset layered under bwrap, built once per sandbox. */
  private scopeRuleset(native: NativeAddon): number | undefined {
    this.scopeFd ??= createScopeRuleset(native)
    return this.scopeFd
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

  /** Removes the sessions' temp dirs and closes every cached ruleset fd; confine() refuses afterwards. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    this.rulesets?.clear()
    this.plans.clear()
    if (this.scopeFd !== undefined) this.native?.closeFd(this.scopeFd)
    this.scopeFd = undefined
    this.grantMemo.clear()
    const dirs = [...this.tempDirs.values()]
    this.tempDirs.clear()
    await Promise.all(dirs.map((d) => fs.promises.rm(d, { recursive: true, force: true })))
  }
}
