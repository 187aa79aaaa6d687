/**
 * A terminal spec confined to a policy: the same request with `cordon-exec init --terminal` in
 * front of the program, for `spawnTerminal` (node-pty) to run as the session leader.
 *
 * node-pty forks and execs from the host and passes nothing but the pty on 0..2 on purpose, so
 * the plan travels on argv: the command's steps (capabilities, no_new_privs, rlimits), its
 * namespaces and the seccomp program as hex. The Landlock ruleset: under Landlock one the host
 * builds for each spawn, as `--ruleset-fd N` (node-pty closes nothing, so spawnTerminal makes it
 * inheritable around the fork; parsing and building ~180 rules inside cost ~1 ms); under bubblewrap as
 * `--landlock`/`--rule RIGHTS:DEV:INO:PATH` (cordon-exec builds it itself and refuses a path that
 * is no longer the inode planned for) with the rule on the sandbox's own /dev/pts. cordon-exec stays outside the domain as the session leader and a subreaper; it forks the
 * program into a process group of its own, makes that group the terminal's foreground, and the
 * child confines itself with exactly the steps a piped command gets, closes every fd above 2, and
 * execs. The supervisor forwards TERM/INT/HUP/QUIT/USR1/USR2 to the tree, ends what the program
 * leaves behind after the grace, and exits the way the program did (no status fd exists here).
 *
 * - landlock: node-pty → cordon-exec init (the host's child, `--host-pid`) → the program.
 * - bubblewrap: node-pty → bwrap (no `--new-session`: job control needs the terminal's session,
 *   no `--json-status-fd`: no fd but the pty exists) → cordon-exec init as pid 1 of the sandbox →
 *   the program. bwrap itself runs without the no_new_privs and the launcher seccomp program a
 *   piped run applies to it (node-pty execs it directly); the program's own program inside
 *   refuses what that one does (io_uring, foreign architectures) and more. A program killed by
 *   signal N shows as exit 128+N here: the sandbox's pid 1 cannot die by its own signal.
 *
 * Fails closed like `confine()`: SANDBOX_UNAVAILABLE when no backend can enforce the mode, the
 * addon is not loaded, or cordon-exec (or bwrap) is missing; a terminal is never wider than a
 * piped command under the same policy. `danger-full-access` returns the spec unchanged.
 *
 * Terminal facts. Landlock: `/dev` stays closed but for the grant table's devices (`/dev/tty`
 * among them), so the program cannot reopen its own `/dev/pts/N` by name (it holds it on 0..2) nor
 * open any other terminal, nor `/dev/ptmx`: granting `/dev/pts` would reopen reading every other
 * terminal of the host. bubblewrap: the sandbox's `/dev/pts` is a private instance without the
 * host's ptys, and the write domain inside gets a rule on it (`--rule-devpts`, checked by
 * cordon-exec to be a devpts that is not the host's) and the seccomp program allows TIOCSCTTY:
 * tools that allocate ptys of their own (tmux, script, expect) work there, and fail under
 * Landlock. TIOCSTI and TIOCLINUX stay refused on every terminal.
 *
 * The plan's ruleset is also built in the host (LocalSandbox, cached), so a ruleset the kernel
 * refuses is SANDBOX_UNAVAILABLE before anything starts; a start that fails anyway (a rule's path
 * replaced since planning: ESTALE) is exit 125 with a `cordon-exec: the command did not start`
 * line on the terminal. cordon-exec closes every descriptor it inherited above 2 before anything
 * else (node-pty closes none), and the program it forks holds only the pty.
 */
import { constants as osConstants } from 'node:os'
import { isAbsolute, resolve as resolvePath } from 'node:path'
import type { EnforcementAccount, SandboxBackendName, SandboxCapabilities } from '../policy/backends.js'
import { SandboxUnavailableError, SpawnError } from '../policy/errors.js'
import { PROXY_PORT } from '../policy/defaults.js'
import { proxyEnvironment } from '../policy/network/proxy-env.js'
import { allowListOf, type SandboxEnforcement, type SandboxExecutionPolicy } from '../policy/vocabulary.js'
import { mergeEnv, scrubbedParentEnv } from '../subprocess/env/scrub.js'
import { helperMissingReason, helperPath } from '../subprocess/native.js'
import { findProgram } from '../subprocess/program-path.js'
import { validateTerminalSpec } from '../subprocess/spec/terminal-schema.js'
import { PROXY_FD_PLACEHOLDER } from '../subprocess/launcher/proxy-listener.js'
import { RULESET_FD_PLACEHOLDER } from '../subprocess/terminal/ruleset-handover.js'
import type { HandedRuleset, SubprocessTerminalSpawnSpec, TerminalAftermath } from '../subprocess/types.js'
import { backendOf } from './backend.js'
import { rulesetArgsFor } from './bubblewrap/plan.js'
import { withoutCgroupLeaves } from './confinement/account.js'
import { hostBounds } from './confinement/bounds.js'
import { type ConfinementPlan, initArgs } from './confinement/plan.js'

/** A terminal spec confined to a policy: what runs, which backend confines it, how completely. */
export interface ConfinedTerminal {
  spec: SubprocessTerminalSpawnSpec
  /** `none` only for `danger-full-access`. */
  backend: SandboxBackendName | 'none'
  /** Absent only for `danger-full-access`. */
  enforcement?: SandboxEnforcement | undefined
  /** The plan's account as it holds for a terminal (no cgroup leaves); absent only for `danger-full-access`. */
  account?: EnforcementAccount | undefined
  /** The session's private temp dir (also `spec.env.TMPDIR`). */
  tempDir?: string | undefined
  /** The plan the spec carries (absent only for `danger-full-access`). */
  plan?: ConfinementPlan | undefined
}

/** What confineTerminal needs of a sandbox: its plans, their host-built rulesets, and what the probe found. */
export interface TerminalPlanner {
  plan(policy: SandboxExecutionPolicy): ConfinementPlan | undefined
  /** The plan's ruleset as a terminal inherits it (built anew per spawn), when the host can build one. */
  rulesetOf?(plan: ConfinementPlan): HandedRuleset | undefined
  readonly capabilities: SandboxCapabilities
}

/** The spec confined to `policy` for spawnTerminal; throws SandboxUnavailableError when no backend fits. */
export function confineTerminal(
  sandbox: TerminalPlanner,
  spec: SubprocessTerminalSpawnSpec,
  policy: SandboxExecutionPolicy,
): ConfinedTerminal {
  validateTerminalSpec(spec)
  const plan = sandbox.plan(policy)
  if (plan === undefined) return { spec, backend: 'none' }
  const helper = helperPath()
  if (helper === undefined) {
    throw new SandboxUnavailableError(plan.policy.mode, { reason: helperMissingReason() })
  }
  // The plan's environment (package caches, the owner's HOME) under the caller's, TMPDIR over both.
  const env = { ...plan.env, ...spec.env, ...(plan.tempDir === undefined ? {} : { TMPDIR: plan.tempDir }) }
  // Under an allow-list the proxy is the only way out: its variables win over the caller's.
  if (allowListOf(plan.policy.network)) Object.assign(env, proxyEnvironment(PROXY_PORT))
  // Landlock: a ruleset of the spawn's own (built ahead once the last terminal is done) is handed
  // over as an inherited descriptor (spawnTerminal), so cordon-exec parses and builds no rules.
  const terminal = backendOf(plan.backend).terminal
  const handed = terminal?.handsRuleset ? sandbox.rulesetOf?.(plan) : undefined
  const launcher = [
    helper,
    ...launcherArgs(plan, spec, handed, terminal?.hostChild === true),
    '--',
    programPath(spec, env),
    ...spec.argv.slice(1),
  ]
  if (terminal === undefined) {
    throw new SandboxUnavailableError(plan.policy.mode, {
      reason: `confined terminals are not implemented for the ${plan.backend} backend`,
      remedy: 'Run the command without a terminal, or choose the landlock or bubblewrap backend.',
    })
  }
  const argv = terminal.argv(plan, launcher, spec, sandbox.capabilities)
  const confined: SubprocessTerminalSpawnSpec = {
    ...spec,
    argv,
    launcher: true,
    env,
    ...(handed ? { ruleset: handed } : {}),
    ...aftermathOf(plan),
  }
  // node-pty starts the terminal: no cgroup leaves, so the limits hold as on a host without them.
  const uid0 = process.getuid?.() === 0
  const account = withoutCgroupLeaves(plan.account, plan.policy.limits, { bounds: hostBounds(), uid0 })
  return {
    spec: confined,
    backend: plan.backend,
    enforcement: account.enforcement,
    account,
    tempDir: plan.tempDir,
    plan,
  }
}

/** What the session must leave as it found it: the plan's must-not-appear paths and links that must stay. */
function aftermathOf(plan: ConfinementPlan): { aftermath?: TerminalAftermath } {
  const from = [plan.mounts?.protected, plan.shield]
  const mustNotAppear = [...new Set(from.flatMap((f) => f?.mustNotAppear ?? []))]
  const links = from.flatMap((f) => f?.mustStay ?? [])
  const mustStay = links.filter((l, i) => links.findIndex((m) => m.path === l.path) === i)
  if (mustNotAppear.length === 0 && mustStay.length === 0) return {}
  return { aftermath: { mustNotAppear, mustStay } }
}

/** `init --terminal …` for a plan: the command's steps, its ruleset (inherited fd, or rules), its seccomp program. */
function launcherArgs(
  plan: ConfinementPlan,
  spec: SubprocessTerminalSpawnSpec,
  handed: HandedRuleset | undefined,
  hostChild: boolean,
): string[] {
  const args = initArgs(plan, {
    statusFd: undefined,
    graceMs: spec.graceMs,
    background: false,
    terminal: true,
    ruleset: handed ? ['--ruleset-fd', RULESET_FD_PLACEHOLDER] : rulesetArgsFor(plan, undefined),
    proxyFd: PROXY_FD_PLACEHOLDER,
  })
  // The supervisor is the host's own child only under Landlock (bwrap stands between otherwise):
  // it refuses to start when its parent is already gone.
  if (hostChild) args.push('--host-pid', String(process.pid))
  return args
}

/** The program as cordon-exec execs it: a path, looked up on the PATH the program will see. */
function programPath(spec: SubprocessTerminalSpawnSpec, env: NodeJS.ProcessEnv | undefined): string {
  const program = spec.argv[0] ?? ''
  if (program.includes('/')) return isAbsolute(program) ? program : resolvePath(spec.cwd, program)
  const found = findProgram(program, mergeEnv(scrubbedParentEnv(), env).PATH)
  if ('error' in found) {
    throw new SpawnError({
      stage: 'exec',
      errno: osConstants.errno[found.error],
      path: program,
      detail: 'not found on the PATH of the confined terminal',
    })
  }
  return found.path
}
