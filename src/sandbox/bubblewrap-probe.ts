/**
 * The bubblewrap probe: find `bwrap` on a PATH (the absolute path is recorded and used for every
 * run), read its version, and run a canary through the very argv `confine` builds — it must be
 * able to write inside its root, and be refused a write and a chmod beside it. The host checks
 * the files. When bwrap is missing or refused (user namespaces disabled, an LSM in the way), the
 * verdict says why, and what a person can do. Never throws.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import type { Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { errnoName, isSpawnError } from '../policy/errors.js'
import { grantsFor } from '../policy/grants.js'
import type { ConfinedSandboxMode, EffectClass, SandboxEnforcement } from '../policy/vocabulary.js'
import { exitWithin, startChild } from '../subprocess/child.js'
import { loadNative, StdioKind, type NativeAddon, type NativeConfinementPlan } from '../subprocess/native.js'
import { bubblewrapArgv } from './bubblewrap.js'
import { bubblewrapEnforcement, bubblewrapGovernedClasses } from './enforcement.js'
import type { BackendCapability } from './probe.js'
import { rulesetAttrSize, SCOPE } from './landlock.js'
import { bubblewrapLauncherFilter, hostSeccompArch } from './seccomp.js'

/** What bubblewrap does not govern here, in words a person can act on. */
export const BUBBLEWRAP_LIMITATIONS: readonly string[] = [
  'network: inherit shares the host network namespace: host abstract unix sockets (D-Bus, X11, @-names) and every TCP/UDP service stay reachable; network: deny gives a private namespace with loopback only',
  'network: deny refuses nothing at socket(): sockets of any family can be created and bound inside the private network namespace, they just reach nothing outside it',
  'pathname unix sockets: connect() to an existing socket file (e.g. /var/run/docker.sock) is not refused by a read-only bind',
  'the seccomp filter loaded before bwrap refuses only io_uring and foreign-architecture/x32 syscalls; metadata and network are governed by binds and namespaces instead',
  'the host /tmp and /var/tmp are visible read-only (not replaced by a tmpfs): write temporary files to TMPDIR, the session temp dir',
  'hiddenPaths are not hidden; protectedPaths are read-only only where they exist when the command starts',
  'the pid namespace ends with the command: a background job it leaves behind is killed when it exits',
  "a command killed by a signal is reported as exit code 128+N (bwrap's init turns the signal into a status), and SIGTERM to the tree ends the whole sandbox at once (no grace inside)",
  'each run costs a few user/mount/pid namespace set-ups: several times a Landlock spawn',
]

/** The network limitation where Landlock ABI 6 scopes are layered under bwrap. */
export const SCOPED_NETWORK_LIMITATION =
  'network: inherit shares the host network namespace: every host TCP/UDP service stays reachable (host abstract unix sockets and signals to host processes are refused by a Landlock scope); network: deny gives a private namespace with loopback only'

/** Remedy when no `bwrap` is on the PATH. */
export const REMEDY_INSTALL_BUBBLEWRAP =
  'install bubblewrap: apt-get install -y bubblewrap (Debian/Ubuntu), dnf install -y bubblewrap (Fedora), apk add bubblewrap (Alpine), and put it on PATH; or choose danger-full-access.'

/** Options for probeBubblewrap. */
export interface BubblewrapProbeOptions {
  /** The PATH searched for `bwrap` (a `:` list); default `process.env.PATH`. */
  searchPath?: string | undefined
  /** Canary time budget (ms); default 3000. */
  timeoutMs?: number
  /** The addon (tests inject one); default `loadNative()`. */
  native?: NativeAddon
  /** The shell the canary runs in; default `/bin/sh`. */
  shell?: string
}

/** The first executable regular file named `name` in a `:` separated `searchPath`, as an absolute real path. */
export function findOnPath(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(':')) {
    if (!path.isAbsolute(dir)) continue // a relative PATH entry depends on the cwd: never trusted
    const candidate = path.join(dir, name)
    try {
      if (!fs.statSync(candidate).isFile()) continue
      fs.accessSync(candidate, fs.constants.X_OK)
      return fs.realpathSync(candidate)
    } catch {}
  }
  return undefined
}

/** Why user namespaces are refused on this host, and the switch that allows them, read from /proc/sys. */
export function userNamespaceRemedy(): string {
  const read = (p: string): string | undefined => {
    try {
      return fs.readFileSync(p, 'utf8').trim()
    } catch {
      return undefined
    }
  }
  const steps: string[] = []
  if (read('/proc/sys/kernel/unprivileged_userns_clone') === '0')
    steps.push('sysctl -w kernel.unprivileged_userns_clone=1')
  if (read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    steps.push(
      'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or load the bwrap-userns-restrict AppArmor profile)',
    )
  }
  if (read('/proc/sys/user/max_user_namespaces') === '0') steps.push('sysctl -w user.max_user_namespaces=15000')
  const how =
    steps.length > 0
      ? steps.join('; ')
      : 'sysctl -w kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0; in a container, allow user namespaces (e.g. a seccomp/AppArmor profile that permits unshare and mount)'
  return `unprivileged user namespaces are disabled or refused: ${how}; or use the landlock backend, or choose danger-full-access.`
}

const USERNS_REFUSAL = /namespace|uid map|gid map|setgroups|RTM_NEW|loopback|Operation not permitted|Permission denied/i

const CANARY_SCRIPT =
  'echo ok > "$1/allowed/ok" || exit 10\n' +
  'if (echo x > "$1/denied") 2>/dev/null; then exit 11; fi\n' +
  'if chmod 750 "$1" 2>/dev/null; then exit 12; fi\n' +
  'exit 0\n'

/**
 * The native plan for a bubblewrap run: no_new_privs, the launcher filter, and (where the kernel
 * has Landlock ABI 6) a Landlock domain that handles no file access at all but scopes abstract
 * unix sockets and signals, so bwrap can still build its mounts while nothing inside can reach a
 * host abstract socket (D-Bus, X11) or signal a host process. bwrap keeps its capabilities.
 */
export function bubblewrapLaunchPlan(
  native: NativeAddon,
  withSeccomp: boolean,
  scopeRulesetFd?: number,
): NativeConfinementPlan | undefined {
  const arch = hostSeccompArch()
  const filter = withSeccomp && arch ? bubblewrapLauncherFilter(arch) : undefined
  if (filter === undefined && scopeRulesetFd === undefined) return undefined
  return {
    dropCaps: false,
    dropBounding: false,
    capLast: native.hostCapabilities().capLast,
    noNewPrivs: true,
    ...(filter ? { filter } : {}),
    ...(scopeRulesetFd === undefined ? {} : { rulesetFd: scopeRulesetFd }),
  }
}

/** A Landlock ruleset fd that only scopes abstract unix sockets and signals (ABI >= 6), or undefined. */
export function createScopeRuleset(native: NativeAddon): number | undefined {
  if (native.landlockAbi() < 6) return undefined
  const fd = native.landlockCreateRuleset(0, 0, SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL, rulesetAttrSize(6))
  return fd >= 0 ? fd : undefined
}

/** Probes bubblewrap (found on `searchPath`) with a canary; never throws. */
export async function probeBubblewrap(options: BubblewrapProbeOptions = {}): Promise<BackendCapability> {
  const started = performance.now()
  const done = (cap: Omit<BackendCapability, 'probeMs' | 'backend' | 'limitations'>): BackendCapability => ({
    backend: 'bubblewrap',
    limitations: cap.landlockScopes
      ? [SCOPED_NETWORK_LIMITATION, ...BUBBLEWRAP_LIMITATIONS.slice(1)]
      : [...BUBBLEWRAP_LIMITATIONS],
    ...cap,
    probeMs: performance.now() - started,
  })
  if (process.platform !== 'linux') {
    return done({
      usable: false,
      reason: `bubblewrap is Linux-only (this is ${process.platform})`,
      remedy: 'Use a Linux host, or choose danger-full-access.',
    })
  }
  const searchPath = options.searchPath ?? process.env.PATH ?? ''
  const bwrap = findOnPath('bwrap', searchPath)
  if (bwrap === undefined) {
    return done({
      usable: false,
      reason: `bwrap was not found on PATH (${searchPath || 'empty'})`,
      remedy: REMEDY_INSTALL_BUBBLEWRAP,
    })
  }
  let version: string
  try {
    version = execFileSync(bwrap, ['--version'], {
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 3000,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim()
  } catch (error) {
    return done({
      executable: bwrap,
      usable: false,
      reason: `${bwrap} --version failed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
      remedy: REMEDY_INSTALL_BUBBLEWRAP,
    })
  }
  let native: NativeAddon
  try {
    native = options.native ?? loadNative()
  } catch (error) {
    return done({
      executable: bwrap,
      version,
      usable: false,
      reason: `the native addon could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
      remedy: 'Build it with `npm run build:native` (needs python3, make and a C++ compiler), or reinstall cordon.',
    })
  }
  // A setuid bwrap must not run under no_new_privs (it could not gain its privileges).
  const setuid = (fs.statSync(bwrap).mode & 0o4000) !== 0
  let seccomp = !setuid
  let scopes = setuid ? undefined : createScopeRuleset(native)
  let attempt = await canary(bwrap, bubblewrapLaunchPlan(native, seccomp, scopes), options)
  if (attempt.failure?.stage === 'landlock' && scopes !== undefined) {
    native.closeFd(scopes)
    scopes = undefined
    attempt = await canary(bwrap, bubblewrapLaunchPlan(native, seccomp), options)
  }
  if (attempt.failure?.stage === 'seccomp') {
    seccomp = false
    attempt = await canary(bwrap, bubblewrapLaunchPlan(native, false, scopes), options)
  }
  const landlockScopes = scopes !== undefined
  if (scopes !== undefined) native.closeFd(scopes)
  const base = {
    executable: bwrap,
    version: `${version}${seccomp ? ' + seccomp' : ''}${landlockScopes ? ' + Landlock scopes' : ''}`,
    seccomp,
    landlockScopes,
  }
  if (attempt.failure) {
    const f = attempt.failure
    return done({
      ...base,
      usable: false,
      reason: `the canary failed before bwrap ran, at ${f.stage} (${f.code})`,
      remedy: 'Check that the kernel allows no_new_privs and seccomp filters, or choose danger-full-access.',
      failure: f,
    })
  }
  if (attempt.error !== undefined)
    return done({
      ...base,
      usable: false,
      reason: attempt.error,
      remedy: 'Check that /bin/sh runs, or choose danger-full-access.',
    })
  if (!attempt.ok) {
    const refused = attempt.bwrapLine !== undefined && USERNS_REFUSAL.test(attempt.bwrapLine)
    return done({
      ...base,
      usable: false,
      reason:
        attempt.bwrapLine !== undefined ? `bwrap refused to start the sandbox (${attempt.bwrapLine})` : attempt.why,
      remedy: refused
        ? userNamespaceRemedy()
        : attempt.bwrapLine !== undefined
          ? 'bwrap cannot build the sandbox on this host; run `bwrap --ro-bind / / true` to see why, use the landlock backend, or choose danger-full-access.'
          : 'Do not rely on bubblewrap on this host (something defeats its read-only binds); use another backend or choose danger-full-access.',
    })
  }
  const modes = ['read-only', 'workspace-write'] as const
  const enforcement = Object.fromEntries(
    modes.map((m) => [
      m,
      { inherit: bubblewrapEnforcement('inherit').enforcement, deny: bubblewrapEnforcement('deny').enforcement },
    ]),
  ) as Record<ConfinedSandboxMode, { inherit: SandboxEnforcement; deny: SandboxEnforcement }>
  const governs = Object.fromEntries(modes.map((m) => [m, bubblewrapGovernedClasses()])) as Record<
    ConfinedSandboxMode,
    EffectClass[]
  >
  return done({
    ...base,
    usable: true,
    enforcement,
    governs,
    ...(seccomp
      ? {}
      : {
          remedy:
            'the launcher seccomp filter does not load here: io_uring is not refused (make bwrap non-setuid, or enable CONFIG_SECCOMP_FILTER)',
        }),
  })
}

interface CanaryOutcome {
  ok: boolean
  why?: string
  /** bwrap's own fatal line (`bwrap: ...`), when it refused. */
  bwrapLine?: string
  failure?: { stage: string; errno: number; code: string }
  error?: string
}

function readAll(socket: Socket | undefined): Promise<string> {
  return new Promise((resolve) => {
    if (!socket) return resolve('')
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')))
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

async function canary(
  bwrap: string,
  plan: NativeConfinementPlan | undefined,
  options: BubblewrapProbeOptions,
): Promise<CanaryOutcome> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-probe-bwrap-')))
  try {
    fs.mkdirSync(path.join(dir, 'allowed'))
    const modeBefore = fs.statSync(dir).mode & 0o7777
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: path.join(dir, 'allowed'), network: 'deny' })
    const argv = bubblewrapArgv(grants, {
      bwrapPath: bwrap,
      network: 'deny',
      cwd: '/',
      command: [options.shell ?? '/bin/sh', '-c', CANARY_SCRIPT, 'cordon-canary', dir],
    })
    let child: ReturnType<typeof startChild>
    try {
      child = startChild({
        argv,
        env: ['PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin', 'LC_ALL=C'],
        cwd: '/',
        stdio: [StdioKind.Null, StdioKind.Null, StdioKind.Pipe],
        confinement: plan,
      })
    } catch (error) {
      if (isSpawnError(error))
        return { ok: false, failure: { stage: error.stage, errno: error.errno, code: errnoName(error.errno) } }
      return { ok: false, error: `the canary could not be spawned: ${String(error)}` }
    }
    const stderr = readAll(child.stderr)
    const timeoutMs = options.timeoutMs ?? 3000
    const outcome = await exitWithin(child, timeoutMs)
    if (outcome === 'timeout')
      return { ok: false, error: `the bubblewrap canary did not finish within ${timeoutMs} ms` }
    const text = await stderr
    const bwrapLine = text.split(/\r?\n/).find((l) => l.startsWith('bwrap: '))
    const wrote = fs.existsSync(path.join(dir, 'allowed', 'ok'))
    const breached = fs.existsSync(path.join(dir, 'denied'))
    const chmodded = (fs.statSync(dir).mode & 0o7777) !== modeBefore
    if (outcome.exitCode === 0 && wrote && !breached && !chmodded) return { ok: true }
    const why =
      outcome.exitCode === 11 || breached
        ? 'the canary was NOT denied a write outside its root'
        : outcome.exitCode === 12 || chmodded
          ? 'the canary was NOT denied a chmod outside its root'
          : outcome.exitCode === 10 || !wrote
            ? 'the canary could not write inside its own root'
            : `the canary exited ${outcome.exitCode ?? outcome.signal}`
    return { ok: false, why: `bubblewrap ran but ${why}`, ...(bwrapLine === undefined ? {} : { bwrapLine }) }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
