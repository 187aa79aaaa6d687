/**
 * The probe: which backends really confine on this host, proved by a canary child that must be
 * denied a write, and for each one that does not, why and what a person can do about it. The
 * probe never throws for an unusable backend; it reports it.
 *
 * The Landlock canary runs under a `workspace-write` ruleset for a fresh directory's `allowed/`
 * and the `read-only` seccomp filter: it must be able to write `allowed/ok` (so it really ran)
 * and must be refused a write beside it and a chmod of its own file. The host checks the files.
 * The bubblewrap probe (bwrap found on PATH, its own canary) lives in `bubblewrap-probe.ts`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { errnoName, isSpawnError } from '../policy/errors.js'
import { grantsFor } from '../policy/grants.js'
import type { ConfinedSandboxMode, EffectClass, SandboxEnforcement } from '../policy/vocabulary.js'
import { exitWithin, startChild } from '../subprocess/child.js'
import { loadNative, StdioKind, type NativeAddon, type NativeConfinementPlan } from '../subprocess/native.js'
import { landlockEnforcement, landlockGovernedClasses } from './enforcement.js'
import { buildRuleset, KNOWN_ABI, planRuleset, RulesetBuildError } from './landlock.js'
import { probeBubblewrap } from './bubblewrap-probe.js'
import { hostSeccompArch, seccompFilterFor, type SeccompArch } from './seccomp.js'

/** The backends cordon can drive on this platform, in preference order (Landlock is the fastest). */
export const SANDBOX_BACKENDS = ['landlock', 'bubblewrap'] as const

/** A backend's name. */
export type SandboxBackendName = (typeof SANDBOX_BACKENDS)[number]

/** What the probe learned about one backend. */
export interface BackendCapability {
  backend: SandboxBackendName
  /** The canary was denied its write: the backend confines on this host. */
  usable: boolean
  /** Why it is not usable (absent when usable). */
  reason?: string
  /** What a person can do to make it usable, or to get `full` where it is `partial`. */
  remedy?: string
  /** Absolute path of the runner executable (`bwrap`), when the backend has one. */
  executable?: string
  /** Landlock ABI the kernel offers (absent when unknown). */
  abi?: number
  /** Human-readable version, e.g. `Landlock ABI 7 (driven at 7) + seccomp`. */
  version?: string
  /** Whether the seccomp filter loads (Landlock: metadata and socket refusals; bubblewrap: io_uring). */
  seccomp?: boolean
  /** bubblewrap: whether a Landlock scope domain (abstract sockets, signals) is layered under bwrap. */
  landlockScopes?: boolean
  /** Enforcement per confined mode with `network: 'inherit'` / `'deny'` (absent when unusable). */
  enforcement?: Record<ConfinedSandboxMode, { inherit: SandboxEnforcement; deny: SandboxEnforcement }>
  /** Effect classes governed per mode (network counts only when the policy denies it). */
  governs?: Record<ConfinedSandboxMode, EffectClass[]>
  /** What this backend does not govern, in words a person can act on. */
  limitations: string[]
  /** The probe's wall time (ms). */
  probeMs: number
  /** The runner failure that made it unusable, when a confinement step failed. */
  failure?: { stage: string; errno: number; code: string }
}

/** Every probed backend, in the order they were asked for. */
export interface SandboxCapabilities {
  platform: NodeJS.Platform
  /** The chain probed, in preference order. */
  chain: SandboxBackendName[]
  backends: Partial<Record<SandboxBackendName, BackendCapability>>
}

/** Things Landlock never governs on an ABI-7 kernel, listed for every host. */
export const LANDLOCK_LIMITATIONS: readonly string[] = [
  'pathname unix sockets: connect() to an existing socket file (e.g. /var/run/docker.sock) is not governed by Landlock ABI 7',
  'workspace-write: metadata (chmod, chown, utime, xattr) outside the writable roots is not governed (use bubblewrap for full)',
  'UDP and other non-TCP protocols are governed only through the seccomp socket filter (network: deny refuses every non-unix socket)',
  'a subpath of a writable root cannot be made read-only (protectedPaths are not enforced by Landlock)',
  '32-bit (i386/x32) syscalls are refused under confinement, so 32-bit binaries cannot run',
]

/** Remedy when the kernel has no Landlock at all. */
export const REMEDY_NO_LANDLOCK =
  'Boot a Linux kernel >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y (ABI 5+, Linux 6.7+, for full read-only enforcement), install bubblewrap for the bubblewrap backend, or choose danger-full-access.'
/** Remedy when Landlock is built in but not enabled at boot. */
export const REMEDY_LANDLOCK_DISABLED =
  'Landlock is built into this kernel but not enabled: add "landlock" to the lsm= kernel parameter (e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot, or choose danger-full-access.'

const CANARY_SCRIPT =
  'echo ok > "$1/allowed/ok" || exit 10\n' +
  'if (echo x > "$1/denied") 2>/dev/null; then exit 11; fi\n' +
  'if [ "$2" = seccomp ] && chmod 600 "$1/allowed/ok" 2>/dev/null; then exit 12; fi\n' +
  'exit 0\n'

/** Options for probeLandlock. */
export interface ProbeOptions {
  /** Canary time budget (ms); default 2000. */
  timeoutMs?: number
  /** The addon (tests inject one); default `loadNative()`. */
  native?: NativeAddon
  /** The shell the canary runs in; default `/bin/sh`. */
  shell?: string
}

/** Probes Landlock (+ seccomp) with a canary; never throws. */
export async function probeLandlock(options: ProbeOptions = {}): Promise<BackendCapability> {
  const started = performance.now()
  const done = (cap: Omit<BackendCapability, 'probeMs' | 'backend' | 'limitations'>): BackendCapability => ({
    backend: 'landlock',
    limitations: [...LANDLOCK_LIMITATIONS],
    ...cap,
    probeMs: performance.now() - started,
  })
  if (process.platform !== 'linux') {
    return done({
      usable: false,
      reason: `Landlock is Linux-only (this is ${process.platform})`,
      remedy: 'Use a Linux host with Landlock, or choose danger-full-access.',
    })
  }
  const arch = hostSeccompArch()
  if (!arch) {
    return done({
      usable: false,
      reason: `no syscall table for ${process.arch}`,
      remedy: 'Run on x86_64 or aarch64, or choose danger-full-access.',
    })
  }
  let native: NativeAddon
  try {
    native = options.native ?? loadNative()
  } catch (error) {
    return done({
      usable: false,
      reason: `the native addon could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
      remedy: 'Build it with `npm run build:native` (needs python3, make and a C++ compiler), or reinstall cordon.',
    })
  }
  const abi = native.landlockAbi()
  if (abi < 0) {
    const errno = -abi
    const disabled = errnoName(errno) === 'EOPNOTSUPP'
    return done({
      usable: false,
      reason: disabled
        ? 'Landlock is supported by the kernel but disabled at boot'
        : `the kernel offers no Landlock (${errnoName(errno)})`,
      remedy: disabled ? REMEDY_LANDLOCK_DISABLED : REMEDY_NO_LANDLOCK,
      failure: { stage: 'landlock', errno, code: errnoName(errno) },
    })
  }
  const level = Math.min(abi, KNOWN_ABI)
  const canary = await runCanary(native, arch, options)
  const base = { abi, version: `Landlock ABI ${abi}${abi > level ? ` (driven at ${level})` : ''}` }
  if (!canary.ok) {
    return done({
      ...base,
      usable: false,
      reason: canary.reason,
      remedy: canary.remedy,
      ...(canary.failure ? { failure: canary.failure } : {}),
    })
  }
  const facts = { abi: level, seccomp: canary.seccomp }
  const modes = ['read-only', 'workspace-write'] as const
  const enforcement = Object.fromEntries(
    modes.map((m) => [
      m,
      {
        inherit: landlockEnforcement(facts, m, 'inherit').enforcement,
        deny: landlockEnforcement(facts, m, 'deny').enforcement,
      },
    ]),
  ) as Record<ConfinedSandboxMode, { inherit: SandboxEnforcement; deny: SandboxEnforcement }>
  const governs = Object.fromEntries(modes.map((m) => [m, landlockGovernedClasses(facts, m)])) as Record<
    ConfinedSandboxMode,
    EffectClass[]
  >
  const partialWhy: string[] = []
  if (level < 5)
    partialWhy.push(
      `Landlock ABI ${level} < 5 leaves truncation or device ioctls ungoverned: upgrade the kernel to 6.7+`,
    )
  if (!canary.seccomp)
    partialWhy.push('seccomp filters do not load (CONFIG_SECCOMP_FILTER): metadata and network are ungoverned')
  return done({
    ...base,
    version: `${base.version}${canary.seccomp ? ' + seccomp' : ''}`,
    usable: true,
    seccomp: canary.seccomp,
    enforcement,
    governs,
    remedy:
      partialWhy.length > 0
        ? partialWhy.join('; ')
        : 'workspace-write is partial under Landlock (metadata outside the root); the bubblewrap backend enforces it fully.',
  })
}

interface CanaryResult {
  ok: boolean
  seccomp: boolean
  reason?: string
  remedy?: string
  failure?: { stage: string; errno: number; code: string }
}

async function runCanary(native: NativeAddon, arch: SeccompArch, options: ProbeOptions): Promise<CanaryResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-probe-'))
  let rulesetFd = -1
  try {
    fs.mkdirSync(path.join(dir, 'allowed'))
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: fs.realpathSync(path.join(dir, 'allowed')) })
    try {
      rulesetFd = buildRuleset(planRuleset(grants, native.landlockAbi()), native)
    } catch (error) {
      const errno = error instanceof RulesetBuildError ? error.errno : 0
      return {
        ok: false,
        seccomp: false,
        reason: `the kernel refused to build a Landlock ruleset (${errnoName(errno)})`,
        remedy: REMEDY_NO_LANDLOCK,
        failure: { stage: 'landlock', errno, code: errnoName(errno) },
      }
    }
    const host = native.hostCapabilities()
    const plan: NativeConfinementPlan = {
      dropCaps: true,
      dropBounding: host.setpcap,
      capLast: host.capLast,
      noNewPrivs: true,
      rulesetFd,
      landlockFlags: 0,
      filter: seccompFilterFor({ arch, mode: 'read-only', network: 'inherit' }),
    }
    let attempt = await canaryOnce(dir, plan, true, options)
    let seccomp = true
    if (attempt.failure?.stage === 'seccomp') {
      seccomp = false
      fs.rmSync(path.join(dir, 'allowed', 'ok'), { force: true })
      const { filter: _filter, ...withoutFilter } = plan
      attempt = await canaryOnce(dir, withoutFilter, false, options)
    }
    if (attempt.failure) {
      const f = attempt.failure
      return {
        ok: false,
        seccomp,
        reason: `the confined canary failed to start at ${f.stage} (${f.code})`,
        remedy:
          f.stage === 'landlock'
            ? REMEDY_NO_LANDLOCK
            : f.stage === 'caps'
              ? 'The host could not drop capabilities in the child; run cordon without a restricted capability bounding set, or choose danger-full-access.'
              : 'Check that the kernel allows no_new_privs and seccomp filters (CONFIG_SECCOMP_FILTER), or choose danger-full-access.',
        failure: f,
      }
    }
    if (attempt.error)
      return {
        ok: false,
        seccomp,
        reason: attempt.error,
        remedy: 'Check that /bin/sh exists and runs; or choose danger-full-access.',
      }
    const wrote = fs.existsSync(path.join(dir, 'allowed', 'ok'))
    const breached = fs.existsSync(path.join(dir, 'denied'))
    if (attempt.exitCode === 0 && wrote && !breached) return { ok: true, seccomp }
    const why =
      attempt.exitCode === 11 || breached
        ? 'the canary was NOT denied a write outside its grant'
        : attempt.exitCode === 12
          ? 'the canary was NOT denied a chmod under the seccomp filter'
          : attempt.exitCode === 10 || !wrote
            ? 'the canary could not write inside its own grant'
            : `the canary exited ${attempt.exitCode ?? attempt.signal}`
    return {
      ok: false,
      seccomp,
      reason: `Landlock accepted the ruleset but ${why}`,
      remedy:
        'Do not rely on Landlock on this host (an LSM stack or kernel quirk defeats it); use another backend or choose danger-full-access.',
    }
  } finally {
    if (rulesetFd >= 0) native.closeFd(rulesetFd)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

interface CanaryAttempt {
  exitCode?: number | null
  signal?: string | null
  failure?: { stage: string; errno: number; code: string }
  error?: string
}

async function canaryOnce(
  dir: string,
  plan: NativeConfinementPlan,
  seccomp: boolean,
  options: ProbeOptions,
): Promise<CanaryAttempt> {
  let child: ReturnType<typeof startChild>
  try {
    child = startChild({
      argv: [options.shell ?? '/bin/sh', '-c', CANARY_SCRIPT, 'cordon-canary', dir, seccomp ? 'seccomp' : 'none'],
      env: ['PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin', 'LC_ALL=C'],
      cwd: '/',
      stdio: [StdioKind.Null, StdioKind.Null, StdioKind.Null],
      confinement: plan,
    })
  } catch (error) {
    if (isSpawnError(error)) return { failure: { stage: error.stage, errno: error.errno, code: error.code } }
    return { error: `the canary could not be spawned: ${String(error)}` }
  }
  const timeoutMs = options.timeoutMs ?? 2000
  const outcome = await exitWithin(child, timeoutMs)
  if (outcome === 'timeout') return { error: `the canary did not finish within ${timeoutMs} ms` }
  return { exitCode: outcome.exitCode, signal: outcome.signal }
}

const probeCache = new Map<string, Promise<SandboxCapabilities>>()

/** Options for probeBackends. */
export interface ProbeBackendsOptions {
  /** The PATH searched for runner executables (`bwrap`); default `process.env.PATH`. */
  searchPath?: string | undefined
}

/** Probes each backend of `chain` once per process (cached, including unusable verdicts). */
export function probeBackends(
  chain: readonly SandboxBackendName[] = SANDBOX_BACKENDS,
  options: ProbeBackendsOptions = {},
): Promise<SandboxCapabilities> {
  const key = `${chain.join(',')}\0${options.searchPath ?? process.env.PATH ?? ''}`
  let cached = probeCache.get(key)
  if (!cached) {
    cached = (async () => {
      const backends: Partial<Record<SandboxBackendName, BackendCapability>> = {}
      for (const name of chain) {
        if (name === 'landlock') backends.landlock = await probeLandlock()
        if (name === 'bubblewrap') backends.bubblewrap = await probeBubblewrap({ searchPath: options.searchPath })
      }
      return { platform: process.platform, chain: [...chain], backends }
    })()
    probeCache.set(key, cached)
  }
  return cached
}

/** Forgets cached probe verdicts (a repaired host is seen by the next probe). */
export function clearProbeCache(): void {
  probeCache.clear()
}
