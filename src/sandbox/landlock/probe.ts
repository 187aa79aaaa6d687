/**
 * The Landlock probe: the ABI the kernel offers, then one canary through the very plan a
 * `read-only` run with `network: 'deny'` gets (the launcher's supervisor, the namespaces, the
 * ruleset, the seccomp program): every effect class must be refused or kept private, and the
 * canary's setsid'd grandchild must be gone when the run is. A seccomp or namespace step the
 * kernel refuses is retried without it, and the verdict says what that costs. Never throws.
 */
import type { BackendCapability } from '../../policy/backends.js'
import { errnoName } from '../../policy/errors.js'
import { grantsFor } from '../../policy/grants.js'
import { DEFAULT_CANARY_TIMEOUT_MS } from '../../policy/defaults.js'
import {
  REMEDY_ARCH,
  REMEDY_BUILD_HELPER,
  REMEDY_CHECK_SECCOMP,
  REMEDY_LANDLOCK_ABI_6,
  REMEDY_LANDLOCK_DISABLED,
  REMEDY_LANDLOCK_WORKSPACE_WRITE,
  REMEDY_LINUX_LANDLOCK,
  REMEDY_NO_LANDLOCK,
  remedyDefeated,
} from '../../policy/remedies.js'
import { helperPath, helperVerdict, loadNative, type NativeAddon } from '../../subprocess/native.js'
import { landlockHost } from '../confinement/host.js'
import { buildRuleset, KNOWN_ABI } from '../ruleset/landlock.js'
import { hostSeccompArch } from '../seccomp/bpf.js'
import { accountsFor } from '../probe/accounts.js'
import { canaryDir, hostNamespaces, judgeCanary, probeFinisher, runCanary } from '../probe/canary.js'
import { RulesetHandle } from '../ruleset/cache.js'
import { DEV_CLOSED, readEntries } from '../view/read-view.js'
import { landlockAccount } from './account.js'
import { landlockPlan } from './plan.js'
import { landlockSpec } from './spec.js'

/** Things Landlock never governs on an ABI-7 kernel, listed for every host. */
export const LANDLOCK_LIMITATIONS: readonly string[] = [
  'pathname unix sockets: connect() to an existing socket file (e.g. /var/run/docker.sock) is not a Landlock right in ABI 7; under network: deny seccomp refuses socket(AF_UNIX) instead (unix sockets inside the roots fail too), under network: inherit host sockets stay reachable',
  'workspace-write: metadata (chmod, chown, utime, xattr) outside the writable roots is not governed (use bubblewrap for full)',
  'a subpath of a writable root cannot be made read-only: protected paths (.git/hooks, .git/config) inside one make the run partial, and the chain prefers bubblewrap',
  'a hidden path inside a writable root cannot be hidden (a .env in the workspace stays readable); hiding is by path: a hard link or another mount of the same file system shows the content',
  'pre-existing hard links inside a writable root to files outside it stay writable through the link',
  'network: inherit leaves cloud metadata addresses (169.254.169.254) reachable',
  'names stay listable everywhere: /dev and other closed places refuse opening their entries, not listing them',
  'stat, access, readlink and getxattr are not Landlock rights: a name known inside a hidden place still shows its existence, size, times, link target and extended attributes (bubblewrap hides them)',
  "host /proc/PID/cmdline stays readable (secrets in other processes' argv leak); /proc/PID/environ, mem and fd are refused",
  'flock on readable files and binding an abstract-socket name a host client later connects to are not refused',
  'process control is allowed only on the caller itself: per-thread calls (sched_setaffinity, setpriority with a thread id) fail with EPERM',
  'without a private pid namespace the command sees host pids in /proc (and cannot act on them)',
  'network: deny gives a private network namespace where one can be made (root, or an unprivileged user namespace): INET, INET6 and NETLINK sockets can be created and bound inside it, loopback only; elsewhere socket() is refused, loopback included',
  '/dev/shm is not writable (no private one without a mount namespace, and the host one is shared): POSIX semaphores fail (Python multiprocessing); a policy with sharedMemory: true prefers bubblewrap, which gives each session its own',
  'tools that allocate their own ptys (tmux, script, expect, Python pty) cannot open them: granting /dev/pts would reopen other terminals; bubblewrap gives each run a /dev/pts of its own',
  '32-bit (i386/x32) syscalls are refused under confinement, so 32-bit binaries cannot run',
]

export { REMEDY_BUILD_HELPER, REMEDY_LANDLOCK_DISABLED, REMEDY_NO_LANDLOCK } from '../../policy/remedies.js'

/** Options for probeLandlock. */
export interface ProbeOptions {
  /** Canary time budget (ms); default 5000. */
  timeoutMs?: number
  /** The addon (tests inject one); default `loadNative()`. */
  native?: NativeAddon
}

/** Probes Landlock (+ seccomp + the launcher) with a canary; never throws. */
export async function probeLandlock(options: ProbeOptions = {}): Promise<BackendCapability> {
  const done = probeFinisher('landlock', LANDLOCK_LIMITATIONS)
  if (process.platform !== 'linux') {
    return done({
      usable: false,
      reason: `Landlock is Linux-only (this is ${process.platform})`,
      remedy: REMEDY_LINUX_LANDLOCK,
    })
  }
  if (!hostSeccompArch()) {
    return done({
      usable: false,
      reason: `no syscall table for ${process.arch}`,
      remedy: REMEDY_ARCH,
    })
  }
  let native: NativeAddon
  try {
    native = options.native ?? loadNative()
  } catch (error) {
    return done({
      usable: false,
      reason: `the native addon could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
      remedy: REMEDY_BUILD_HELPER,
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
  const base = { abi, version: `Landlock ABI ${abi}${abi > level ? ` (driven at ${level})` : ''}` }
  const helper = helperPath()
  if (helper === undefined) return done({ ...base, ...helperVerdict() })

  let facts = { abi: level, seccomp: true, supervisor: true, namespaces: true }
  let verdict = await canaryFor(native, helper, facts, options)
  if (!verdict.ran && verdict.stage === 'seccomp') {
    facts = { ...facts, seccomp: false }
    verdict = await canaryFor(native, helper, facts, options)
  }
  if (!verdict.ran && verdict.stage === 'namespace') {
    facts = { ...facts, namespaces: false }
    verdict = await canaryFor(native, helper, facts, options)
  }
  if (!verdict.ran) {
    const remedy =
      verdict.stage === 'landlock'
        ? REMEDY_NO_LANDLOCK
        : verdict.stage === 'launcher'
          ? REMEDY_BUILD_HELPER
          : REMEDY_CHECK_SECCOMP
    return done({
      ...base,
      usable: false,
      reason: `the confined canary failed to start at ${verdict.stage} (${errnoName(verdict.errno)})`,
      remedy,
      failure: { stage: verdict.stage, errno: verdict.errno, code: errnoName(verdict.errno) },
    })
  }
  if (verdict.failures.length > 0) {
    return done({
      ...base,
      usable: false,
      canary: verdict.results,
      reason: `Landlock accepted the plan but the canary was not refused: ${verdict.failures.map((f) => `${f.check} (${f.got}; wanted: ${f.wanted})`).join('; ')}`,
      remedy: remedyDefeated('Landlock', 'an LSM stack or kernel quirk defeats it'),
    })
  }
  const host = landlockHost(native, facts)
  const partialWhy: string[] = []
  if (level < 6)
    partialWhy.push(`Landlock ABI ${level} < 6 leaves signals to host processes ungoverned: ${REMEDY_LANDLOCK_ABI_6}`)
  if (!facts.seccomp)
    partialWhy.push(
      'seccomp filters do not load (CONFIG_SECCOMP_FILTER): metadata, network, keyrings, IPC and terminals are ungoverned',
    )
  return done({
    ...base,
    version: `${base.version}${facts.seccomp ? ' + seccomp' : ''} + cordon-exec supervisor${facts.namespaces ? ' + namespaces' : ''}`,
    usable: true,
    seccomp: facts.seccomp,
    supervisor: true,
    namespaces: { ipc: facts.namespaces, net: facts.namespaces, user: facts.namespaces && host.uid !== 0 },
    canary: verdict.results,
    ...accountsFor((mode, network) =>
      landlockAccount(
        {
          abi: level,
          seccomp: facts.seccomp,
          supervisor: true,
          namespaces: {
            ipc: facts.namespaces && (host.uid === 0 || network === 'deny'),
            net: facts.namespaces && network === 'deny',
            keys: facts.namespaces && host.uid === 0,
          },
          uid0: host.uid === 0,
        },
        { mode, network },
      ),
    ),
    remedy: partialWhy.length > 0 ? partialWhy.join('; ') : REMEDY_LANDLOCK_WORKSPACE_WRITE,
  })
}

type CanaryVerdict =
  | { ran: true; failures: ReturnType<typeof judgeCanary>; results: Record<string, number> }
  | { ran: false; stage: string; errno: number }

async function canaryFor(
  native: NativeAddon,
  helper: string,
  facts: { abi: number; seccomp: boolean; supervisor: boolean; namespaces: boolean },
  options: ProbeOptions,
): Promise<CanaryVerdict> {
  const scratch = canaryDir()
  let handle: RulesetHandle | undefined
  try {
    const host = landlockHost(native, facts)
    const policy = { mode: 'read-only' as const, workspaceRoot: scratch.dir, network: 'deny' as const }
    const grants = grantsFor(policy, { tempDir: scratch.allowed })
    const plan = landlockPlan(policy, grants, host, { epoch: 0, entries: readEntries([DEV_CLOSED]).entries })
    if (plan.ruleset) {
      try {
        handle = new RulesetHandle(buildRuleset(plan.ruleset, native))
      } catch (error) {
        const errno = typeof (error as { errno?: unknown }).errno === 'number' ? (error as { errno: number }).errno : 0
        return { ran: false, stage: 'landlock', errno }
      }
    }
    const spec = landlockSpec(
      {
        argv: [helper, 'canary', scratch.dir, String(process.pid)],
        cwd: '/',
        graceMs: 1000,
        env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
      },
      plan,
      handle,
    )
    const run = await runCanary(spec, options.timeoutMs ?? DEFAULT_CANARY_TIMEOUT_MS, scratch.dir)
    if (!run.ran) return { ran: false, stage: run.stage, errno: run.errno }
    const failures = judgeCanary(
      run.report,
      {
        privateIpc: plan.namespaces.ipc,
        networkDenied: true,
        privateNet: plan.namespaces.net,
        privatePid: false,
        // A read-only view's mounts refuse before Landlock does.
        writeRefusal: plan.namespaces.view ? [13, 30] : [13],
        watchesRefused: true,
      },
      { ...hostNamespaces(), orphanGone: run.orphanGone },
    )
    // Without seccomp the canary cannot be refused what only seccomp refuses: the account says so.
    const onlySeccomp = new Set([
      'chmod',
      'prlimit',
      'keyring',
      'sysv',
      'tiocsti',
      'lease',
      'fs_ioctl',
      'watch',
      'socket_unix',
      'socket_inet',
    ])
    return {
      ran: true,
      failures: facts.seccomp ? failures : failures.filter((f) => !onlySeccomp.has(f.check)),
      results: run.report.results,
    }
  } finally {
    handle?.close(native)
    scratch.dispose()
  }
}
