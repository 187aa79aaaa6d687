/**
 * LocalSandbox: the sandbox floor's face. It probes once (cached), then turns a spawn spec and a
 * policy into the same spec carrying its confinement plan — or throws SANDBOX_UNAVAILABLE. It
 * never hands back an unconfined spec for a confined mode, and `danger-full-access` never asks a
 * backend. The session's state (its private dirs, caches, read views, remembered plans, ruleset
 * fds) lives in session.ts; what differs per backend, in the table of backend.ts.
 */
import type { SandboxBackendName, SandboxCapabilities } from '../policy/backends.js'
import { SandboxUnavailableError, StateInGrantError } from '../policy/errors.js'
import { grantsFor } from '../policy/grants.js'
import { PROXY_PORT } from '../policy/defaults.js'
import { REMEDY_ALLOW_LIST } from '../policy/remedies.js'
import {
  allowListOf,
  isConfinedMode,
  type NetworkAllowList,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  type SandboxPolicy,
} from '../policy/vocabulary.js'
import { loadNative, type NativeAddon } from '../subprocess/native.js'
import { sweepStaleSessions } from '../subprocess/private-dirs/layout.js'
import type { ProxiedNetwork, SubprocessSpawnSpec, SubprocessTerminalSpawnSpec } from '../subprocess/types.js'
import { backendOf, type BackendPlan, isLinuxPlan } from './backend.js'
import { type ConfinedTerminal, confineTerminal } from './confine-terminal.js'
import type { ShieldFacts } from './confinement/account.js'
import type { ConfinementPlan } from './confinement/plan.js'
import type { HostPrograms } from './bubblewrap/program.js'
import { NetworkProxy } from './network/proxy.js'
import { probeBackends } from './probe.js'
import type { SeatbeltPlan } from './seatbelt/plan.js'
import { type BackendChoice, defaultChain, selectBackend } from './select.js'
import { SandboxSession } from './session.js'
import { type ConfigOption, configFromOption } from './load-config.js'
import type { ResolvedConfig } from '../policy/config/settings.js'
import { type HostProgramInRoot, hostPrograms, hostProgramsIn } from './view/host-programs.js'
import { type NotedRun, RefusalLog, type RefusalLogQuery, type RefusalLogRead } from './refusal-log/log.js'

export { seatbeltHiddenSet } from './seatbelt/backend.js'

let swept = false

/** Options for LocalSandbox.create. */
export interface LocalSandboxOptions {
  /** The backend chain, in preference order; default every backend of this platform (select.ts `defaultChain`). */
  backends?: readonly SandboxBackendName[]
  /** Use these verdicts instead of probing (tests, or a harness that probed elsewhere). */
  capabilities?: SandboxCapabilities
  /** Most Landlock rulesets kept open; default 16. */
  rulesetCacheSize?: number
  /** Programs the host runs, pinned by absolute path (each checked: bubblewrap/program.ts); default `CORDON_BWRAP`, else /usr/bin:/bin:/usr/sbin:/sbin, never PATH. */
  programs?: HostPrograms | undefined
  /** Keep the probe's verdict on disk between processes (`use`), or probe anew and keep it (`refresh`); default neither. */
  probeCache?: 'use' | 'refresh' | undefined
  /** The environment hidden paths (`~`, `$XDG_RUNTIME_DIR`), socket masks and the private layout are read from; default `process.env`. */
  env?: NodeJS.ProcessEnv | undefined
  /**
   * Run bubblewrap plans in a resident instance, one bwrap per plan that each run is a request to
   * (default true); false starts a bwrap per run (cheaper for a process that runs one command).
   */
  residentInstances?: boolean | undefined
  /**
   * The proxy network allow-lists go through (default: one of its own, made on first use and
   * closed with the sandbox). Tests hand one whose resolver maps names to loopback servers.
   */
  networkProxy?: NetworkProxy | undefined
  /**
   * The configuration the sandbox exposes as `config` (its policies stay the caller's): by default
   * the user config; `{ workspaceRoot }` adds that root's `.cordon.json` (`configFile`,
   * `acceptChanged`, `overrides` as loadConfig takes them); false reads none; a config loaded
   * already is taken as is. A malformed or widening file throws before anything is probed.
   */
  config?: ConfigOption
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

/** 0 for a backend that gives each session a private /dev/shm, 1 otherwise. */
const shmRank = (backend: SandboxBackendName) => (backendOf(backend).privateShm ? 0 : 1)

/**
 * The chain cut to the backends that keep `held` (host programs inside writable roots) read-only;
 * throws StateInGrantError, naming the program and why, when none of them is usable or none can.
 */
function keepingProgramsReadOnly(caps: SandboxCapabilities, held: readonly HostProgramInRoot[]): SandboxCapabilities {
  const first = held.find((h) => !h.protectable) ?? (held[0] as HostProgramInRoot)
  if (!first.protectable)
    throw new StateInGrantError(
      first.root,
      first.path,
      `${first.what} would be writable, and no backend keeps a writable root itself, or a program outside cordon's package, read-only`,
    )
  const chain = caps.chain.filter((name) => backendOf(name).keepsHostProgramsReadOnly)
  if (chain.some((name) => caps.backends[name]?.usable)) return { ...caps, chain }
  const cannot = caps.chain.filter((name) => !chain.includes(name))
  const others = chain.length === 0 ? 'no backend of the chain can' : `${chain.join(', ')} is not usable here`
  throw new StateInGrantError(
    first.root,
    first.path,
    `${first.what} must stay read-only, ${cannot.join(', ') || 'the chain'} cannot keep it so inside a writable root, and ${others}`,
    'Install cordon outside the workspace, or make bubblewrap usable (it binds the package read-only).',
  )
}

/**
 * Throws SANDBOX_UNAVAILABLE unless `plan` gives each run a network namespace of its own whose
 * listener reaches the host: never a fallback to the host's network or to a cut without the proxy.
 */
function refuseUnprovenAllowList(plan: BackendPlan, native: boolean): void {
  const mode = plan.policy.mode
  const unavailable = (reason: string) => new SandboxUnavailableError(mode, { reason, remedy: REMEDY_ALLOW_LIST })
  if (!isLinuxPlan(plan)) throw unavailable(`network allow-lists are not built for ${plan.backend} yet`)
  if (!native) throw unavailable('a network allow-list needs the native addon (its listener is handed over a socket)')
  if (plan.backend === 'landlock' && !plan.namespaces.net)
    throw unavailable('no private network namespace can be made here (neither root nor an unprivileged user namespace)')
}

/** Confines spawn specs to sandbox policies on this host. */
export class LocalSandbox {
  private readonly session: SandboxSession
  private readonly resident: boolean
  private readonly givenProxy: NetworkProxy | undefined
  private ownProxy: NetworkProxy | undefined
  private readonly refusalLog = new RefusalLog()

  private constructor(
    /** What the probe found, per backend. */
    readonly capabilities: SandboxCapabilities,
    native: NativeAddon | undefined,
    options: LocalSandboxOptions,
    /** The configuration read at creation (see LocalSandboxOptions.config), with each setting's source. */
    readonly config: ResolvedConfig,
  ) {
    this.session = new SandboxSession(native, options.env ?? process.env, options.rulesetCacheSize)
    this.resident = options.residentInstances !== false
    this.givenProxy = options.networkProxy
  }

  /** Probes the chain once (cached per process) and returns a sandbox; never throws for an unusable backend. */
  static async create(options: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const config = configFromOption(options.config, options.env)
    const chain = options.backends ?? defaultChain()
    const capabilities =
      options.capabilities ??
      (await probeBackends(chain, { programs: options.programs, diskCache: options.probeCache }))
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
    return new LocalSandbox(capabilities, native, options, config)
  }

  /**
   * The backend and account `policy` gets here; throws SandboxUnavailableError when none fits,
   * StateInGrantError when its roots hold a host program (`held`) no usable backend keeps read-only.
   */
  choose(policy: SandboxPolicy, shield?: ShieldFacts, held: readonly HostProgramInRoot[] = []): BackendChoice {
    // A command that needs /dev/shm goes first to the backends that give a private one.
    const ranked =
      policy.sharedMemory === true
        ? { ...this.capabilities, chain: [...this.capabilities.chain].sort((a, b) => shmRank(a) - shmRank(b)) }
        : this.capabilities
    const caps = held.length > 0 ? keepingProgramsReadOnly(ranked, held) : ranked
    return selectBackend(caps, policy, (name, capability) => backendOf(name).account(policy, capability, shield))
  }

  /**
   * The plan for `policy` (undefined for `danger-full-access`, which no backend is asked for):
   * the backend chosen, what it governs, and every rule it applies. Throws SandboxUnavailableError
   * when nothing can enforce the policy, InvalidRequestError for refused roots, RootChangedError
   * for a root of this session that was replaced since it was first used.
   */
  plan(policy: SandboxExecutionPolicy): BackendPlan | undefined {
    if (this.session.disposed) throw new Error('LocalSandbox: plan() after dispose()')
    if (!isConfinedMode(policy.mode)) {
      grantsFor(policy) // validates the policy all the same
      return undefined
    }
    const confined = policy as SandboxPolicy
    const key = JSON.stringify(policy)
    const remembered = this.session.remembered(key, confined)
    if (remembered) return remembered
    const request = this.session.request(confined)
    const held = hostProgramsIn(request.grants, hostPrograms(this.capabilities))
    const choice = this.choose(confined, request.shield, held)
    const backend = backendOf(choice.backend)
    if (!request.native && backend.plansWithAddon)
      throw new SandboxUnavailableError(policy.mode, { reason: 'the native addon is not loaded' })
    const plan = backend.plan({ ...request, capability: choice.capability })
    if (allowListOf(confined.network)) refuseUnprovenAllowList(plan, request.native !== undefined)
    this.session.remember(key, plan, request)
    return plan
  }

  /** The spec confined to `policy` (the runtime runs it as is); throws SandboxUnavailableError when no backend fits. */
  confine(spec: SubprocessSpawnSpec, policy: SandboxExecutionPolicy): ConfinedSpawn {
    const plan = this.plan(policy)
    if (plan === undefined) {
      const { confinement: _ignored, ...bare } = spec
      return { spec: bare, backend: 'none' }
    }
    const host = {
      capabilities: this.capabilities,
      ruleset: (p: ConfinementPlan) => this.session.rulesetFor(p),
      resident: this.resident,
    }
    const confined = backendOf(plan.backend).confine(spec, plan, host)
    const list = allowListOf(policy.network)
    const out: ConfinedSpawn = {
      spec: list ? { ...confined, confinement: { ...confined.confinement!, network: this.proxied(list) } } : confined,
      backend: plan.backend,
      enforcement: plan.account.enforcement,
      plan,
    }
    if (plan.tempDir !== undefined) out.tempDir = plan.tempDir
    const spill = isLinuxPlan(plan) ? plan.grants.readable[0]?.path : undefined
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
        if (plan !== undefined && !isLinuxPlan(plan)) {
          throw new SandboxUnavailableError(p.mode, { reason: 'confined terminals are not built for Seatbelt yet' })
        }
        if (plan) this.session.rulesetFor(plan)
        return plan
      },
      rulesetOf: (plan: ConfinementPlan) => this.session.handedRuleset(plan),
    }
    const confined = confineTerminal(planner, spec, policy)
    const list = allowListOf(policy.network)
    if (list === undefined || confined.backend === 'none') return confined
    return { ...confined, spec: { ...confined.spec, network: this.proxied(list) } }
  }

  /** Where a run under `list` hands its proxy listener: this sandbox's proxy, for that run. */
  private proxied(list: NetworkAllowList): ProxiedNetwork {
    return {
      proxyPort: PROXY_PORT,
      serve: (fd) => {
        this.ownProxy ??= this.givenProxy === undefined ? new NetworkProxy() : undefined
        return (this.givenProxy ?? this.ownProxy!).attach(fd, list)
      },
    }
  }

  /** Notes a settled run (the executor calls it): one with refusals joins the refusal log. */
  noteRun(run: NotedRun): void {
    this.refusalLog.note(run)
  }

  /** The refusal log: the runs that met refusals, oldest first, as `query` selects them. */
  refusals(query?: RefusalLogQuery): RefusalLogRead {
    return this.refusalLog.read(query)
  }

  /** The number of Landlock ruleset fds held (for leak checks). */
  get openRulesets(): number {
    return this.session.openRulesets
  }

  /** Removes the sessions' temp dirs and closes every ruleset fd; confine() refuses afterwards. */
  async dispose(): Promise<void> {
    await this.ownProxy?.close()
    await this.session.dispose()
  }
}
