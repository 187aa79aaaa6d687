/**
 * The bubblewrap probe: choose `bwrap` (program.ts: configured, or the trusted search path, never
 * the caller's PATH; its path and identity are recorded and every run checks them), read its version, and run the canary through the very argv `confine` builds (bwrap's
 * namespaces and binds, cordon-exec inside with its Landlock write domain and seccomp program):
 * every effect class must be refused or kept private. When bwrap is missing or refused (user
 * namespaces disabled, an LSM in the way), the verdict says why and what a person can do.
 * Never throws.
 */
import fs from 'node:fs'
import type { BackendCapability } from '../../policy/backends.js'
import { errnoName } from '../../policy/errors.js'
import { DEFAULT_CANARY_TIMEOUT_MS } from '../../policy/defaults.js'
import { grantsFor } from '../../policy/grants.js'
import {
  REMEDY_BWRAP_NO_SECCOMP,
  REMEDY_BWRAP_REFUSED,
  REMEDY_CHECK_SECCOMP,
  REMEDY_INSTALL_BUBBLEWRAP,
  REMEDY_LINUX_ONLY,
  REMEDY_UNTRUSTED_PROGRAM,
  remedyDefeated,
  remedyUserNamespaces,
} from '../../policy/remedies.js'
import { helperLookup, helperVerdict, loadNative, type NativeAddon } from '../../subprocess/native.js'
import { identityFacts } from '../../subprocess/trusted-program.js'
import { helperLandlockAbi, portableHostCapabilities } from '../../subprocess/portable/host.js'
import { childProcess } from '../../subprocess/lazy-builtins.js'
import { landlockHost } from '../confinement/host.js'
import { accountsFor } from '../probe/accounts.js'
import { canaryDir, hostNamespaces, judgeCanary, probeFinisher, runCanary } from '../probe/canary.js'
import { RulesetHandle } from '../ruleset/cache.js'
import { buildRuleset, statPath } from '../ruleset/landlock.js'
import { bubblewrapAccount } from './account.js'
import type { ConfinementPlan } from '../confinement/plan.js'
import { bubblewrapPlan } from './plan.js'
import { releaseResident } from './resident.js'
import { chooseBwrap, configuredBwrap } from './program.js'
import { bubblewrapSpec } from './spec.js'

/** What bubblewrap does not govern here, in words a person can act on. */
export const BUBBLEWRAP_LIMITATIONS: readonly string[] = [
  'network: inherit shares the host network namespace: every host TCP/UDP service stays reachable (host abstract unix sockets and signals to host processes are refused by the Landlock scopes inside); network: deny gives a private namespace with loopback only',
  'pathname unix sockets: /run, /var/run, /tmp/.X11-unix, $XDG_RUNTIME_DIR and the SSH agent dir are masked by an empty tmpfs (allowUnixSockets binds sockets back); a host socket elsewhere stays reachable under network: inherit; under network: deny seccomp refuses socket(AF_UNIX)',
  'hiding is by path: a hard link or another mount of the same file system outside the hidden paths shows the content; pre-existing hard links inside a writable root to files outside it stay writable',
  "hiding a file in a large directory costs a bind mount per other entry (the shell over its parent): /etc's shadow files make a sandbox's first run (and every run of a bwrap per run) ~35 ms slower here; later runs reuse its resident instance",
  'a repository the command creates itself (git init, git clone) is not protected: its hooks could run later unconfined',
  'network: inherit leaves cloud metadata addresses (169.254.169.254) reachable',
  'network: deny gives a private network namespace: INET, INET6 and NETLINK sockets can be created and bound inside it, loopback only',
  '/dev/shm is private: each session gets its own /dev/shm (bound from its session dir), so POSIX shared memory works and the host one is unreachable',
  'ptys are private: each run gets a /dev/pts of its own, so tools that allocate ptys (tmux, script, expect, Python pty) work and take them as controlling terminals; no host terminal is reachable by path',
  'the host /tmp and /var/tmp are visible read-only (not replaced by a tmpfs): write temporary files to TMPDIR, the session temp dir',
  'a protected path missing when the command starts is not read-only during the run: one the run creates is taken away once it ends',
  "a background job's daemons die with the job's init when the job is killed (one pid namespace per run)",
  'runs of one plan share a resident bwrap instance and its user namespace: keyring calls stay refused by seccomp, but per-user counts (RLIMIT_NPROC, inotify instances) are shared, so one run can exhaust them for the next (refused, never less confined); each run gets pid, mount, IPC and (network: deny) network namespaces of its own',
]

export { REMEDY_INSTALL_BUBBLEWRAP } from '../../policy/remedies.js'

/** Options for probeBubblewrap. */
export interface BubblewrapProbeOptions {
  /** Absolute path of the `bwrap` to run (checked, never a PATH search); default program.ts `configuredBwrap`. */
  bwrap?: string | undefined
  /** Canary time budget (ms); default 5000. */
  timeoutMs?: number
  /** The addon (tests inject one); default `loadNative()`. */
  native?: NativeAddon
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
  return remedyUserNamespaces(how)
}

const USERNS_REFUSAL = /namespace|uid map|gid map|setgroups|RTM_NEW|loopback|Operation not permitted|Permission denied/i

/** `bwrap --version`, or why it failed (the reason and remedy of an unusable verdict). */
function bwrapVersion(bwrap: string, timeoutMs: number | undefined): string | { reason: string; remedy: string } {
  try {
    return childProcess()
      .execFileSync(bwrap, ['--version'], {
        encoding: 'utf8',
        timeout: timeoutMs ?? DEFAULT_CANARY_TIMEOUT_MS,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      .trim()
  } catch (error) {
    return {
      reason: `${bwrap} --version failed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
      remedy: REMEDY_INSTALL_BUBBLEWRAP,
    }
  }
}

/** Probes bubblewrap (program.ts chooses the bwrap) with the canary; never throws. */
export async function probeBubblewrap(options: BubblewrapProbeOptions = {}): Promise<BackendCapability> {
  const done = probeFinisher('bubblewrap', BUBBLEWRAP_LIMITATIONS)
  if (process.platform !== 'linux') {
    return done({
      usable: false,
      reason: `bubblewrap is Linux-only (this is ${process.platform})`,
      remedy: REMEDY_LINUX_ONLY,
    })
  }
  const choice = chooseBwrap(configuredBwrap({ bwrap: options.bwrap }))
  const refused = [...choice.refused]
  const finish = (verdict: Parameters<typeof done>[0]) =>
    done(refused.length > 0 ? { ...verdict, refusedPrograms: refused } : verdict)
  if (choice.identity === undefined) {
    return finish({
      usable: false,
      reason: choice.reason,
      remedy: choice.untrusted ? REMEDY_UNTRUSTED_PROGRAM : REMEDY_INSTALL_BUBBLEWRAP,
    })
  }
  // The path as checked is what every run executes (and checks again: program.ts bwrapProblem).
  const bwrap = choice.identity.path
  const identity = { executable: bwrap, executableIdentity: identityFacts(choice.identity) }
  const version = bwrapVersion(bwrap, options.timeoutMs)
  if (typeof version !== 'string') return finish({ ...identity, usable: false, ...version })
  // Without the addon (the portable spawn path) cordon-exec inside still layers everything: it
  // builds the Landlock write domain from --rule arguments and reports the kernel's ABI itself.
  let native: NativeAddon | undefined
  try {
    native = options.native ?? loadNative()
  } catch {
    native = undefined
  }
  const lookup = helperLookup()
  refused.push(...lookup.refused)
  const helper = lookup.path
  if (helper === undefined) {
    return finish({
      ...identity,
      version,
      ...helperVerdict(),
    })
  }
  const abi = native ? Math.max(0, native.landlockAbi()) : helperLandlockAbi(helper)
  const setuid = (fs.statSync(bwrap).mode & 0o4000) !== 0
  let facts = { abi, seccomp: true }
  let verdict = await canaryOnBothPaths(native, { bwrap, helper, setuid }, facts, options)
  if (!verdict.ran && verdict.stage === 'seccomp') {
    facts = { ...facts, seccomp: false }
    verdict = await canaryOnBothPaths(native, { bwrap, helper, setuid }, facts, options)
  }
  const base = {
    ...identity,
    version: `${version}${facts.seccomp ? ' + seccomp' : ''}${abi >= 3 ? ` + Landlock ABI ${abi} writes` : ''} + cordon-exec init`,
    abi,
    seccomp: facts.seccomp,
  }
  if (!verdict.ran) {
    const usernsRefused = verdict.line !== undefined && USERNS_REFUSAL.test(verdict.line)
    return finish({
      ...base,
      usable: false,
      reason:
        verdict.line !== undefined
          ? `bwrap refused to start the sandbox (${verdict.line})`
          : `the canary failed to start at ${verdict.stage} (${errnoName(verdict.errno)})`,
      remedy: usernsRefused
        ? userNamespaceRemedy()
        : verdict.line !== undefined
          ? REMEDY_BWRAP_REFUSED
          : REMEDY_CHECK_SECCOMP,
      ...(verdict.stage === 'launcher'
        ? {}
        : { failure: { stage: verdict.stage, errno: verdict.errno, code: errnoName(verdict.errno) } }),
    })
  }
  if (verdict.failures.length > 0) {
    return finish({
      ...base,
      usable: false,
      canary: verdict.results,
      reason: `bubblewrap ran but the canary was not refused: ${verdict.failures.map((f) => `${f.check} (${f.got}; wanted: ${f.wanted})`).join('; ')}`,
      remedy: remedyDefeated('bubblewrap', 'something defeats its binds or namespaces'),
    })
  }
  const uid0 = (process.getuid?.() ?? 0) === 0
  return finish({
    ...base,
    usable: true,
    supervisor: true,
    namespaces: { ipc: true, net: true, user: true },
    canary: verdict.results,
    ...accountsFor((mode, network) =>
      bubblewrapAccount(
        { abi, seccomp: facts.seccomp, supervisor: true, namespaces: { ipc: true, net: network === 'deny' }, uid0 },
        { mode, network },
      ),
    ),
    ...(facts.seccomp
      ? {}
      : {
          remedy: REMEDY_BWRAP_NO_SECCOMP,
        }),
  })
}

type CanaryVerdict =
  | { ran: true; failures: ReturnType<typeof judgeCanary>; results: Record<string, number> }
  | { ran: false; stage: string; errno: number; line?: string | undefined }

/**
 * The canary in a resident instance and under a bwrap of its own (a run goes either way: the
 * portable path and `residentInstances: false` start a bwrap per run), side by side: the
 * resident verdict when it is not a pass, else the per-run one.
 */
async function canaryOnBothPaths(
  native: NativeAddon | undefined,
  tools: { bwrap: string; helper: string; setuid: boolean },
  facts: { abi: number; seccomp: boolean },
  options: BubblewrapProbeOptions,
): Promise<CanaryVerdict> {
  const perRun = canaryFor(native, { ...tools, resident: false }, facts, options)
  if (native === undefined || tools.setuid) return perRun
  // Side by side: the probe is on every sandbox's start-up path.
  const [resident, own] = await Promise.all([canaryFor(native, { ...tools, resident: true }, facts, options), perRun])
  return !resident.ran || resident.failures.length > 0 ? resident : own
}

async function canaryFor(
  native: NativeAddon | undefined,
  tools: { bwrap: string; helper: string; setuid: boolean; resident: boolean },
  facts: { abi: number; seccomp: boolean },
  options: BubblewrapProbeOptions,
): Promise<CanaryVerdict> {
  const scratch = canaryDir()
  let handle: RulesetHandle | undefined
  let plan: ConfinementPlan | undefined
  try {
    const host = landlockHost(native ?? { hostCapabilities: portableHostCapabilities }, {
      abi: facts.abi,
      seccomp: facts.seccomp,
      supervisor: true,
      namespaces: true,
    })
    const policy = { mode: 'read-only' as const, workspaceRoot: scratch.dir, network: 'deny' as const }
    const grants = grantsFor(policy, { tempDir: scratch.allowed })
    plan = bubblewrapPlan(policy, grants, host, { setuid: tools.setuid, hostDevpts: statPath('/dev/pts')?.dev })
    if (plan.ruleset && native) handle = new RulesetHandle(buildRuleset(plan.ruleset, native))
    const spec = bubblewrapSpec(
      {
        argv: [tools.helper, 'canary', scratch.dir, String(process.pid)],
        cwd: '/',
        graceMs: 1000,
        env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
      },
      plan,
      handle,
      tools,
    )
    const run = await runCanary(spec, options.timeoutMs ?? DEFAULT_CANARY_TIMEOUT_MS, scratch.dir)
    if (!run.ran) {
      const line = /bwrap: [^\n]*/.exec(run.message)?.[0]
      return { ran: false, stage: run.stage, errno: run.errno, line }
    }
    const failures = judgeCanary(
      run.report,
      { privateIpc: true, networkDenied: true, privateNet: true, privatePid: true, writeRefusal: [30, 13] },
      { ...hostNamespaces(), orphanGone: run.orphanGone },
    )
    const onlySeccomp = new Set(['keyring', 'tiocsti', 'lease', 'fs_ioctl', 'socket_unix'])
    return {
      ran: true,
      failures: facts.seccomp ? failures : failures.filter((f) => !onlySeccomp.has(f.check)),
      results: run.report.results,
    }
  } catch (error) {
    return { ran: false, stage: 'landlock', errno: (error as { errno?: number }).errno ?? 0 }
  } finally {
    if (plan) releaseResident(plan)
    if (native) handle?.close(native)
    scratch.dispose()
  }
}
