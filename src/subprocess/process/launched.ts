/**
 * `launched` runs (every Landlock run and every supervised one): the launcher forks a supervisor
 * that forks the command. The supervisor is a subreaper outside the sandbox, so the tree is
 * everything below it and its own exit means the tree is gone; it reports the command's exit on
 * a status pipe and owns termination: the host signals it, it forwards to the whole tree and
 * escalates to SIGKILL after the grace. Without the native launcher (portable path) the spawner
 * starts the same supervisor itself.
 */
import { fstatSync } from 'node:fs'
import { SpawnError } from '../../policy/errors.js'
import { launch } from '../launcher/launch.js'
import { nativeLines, supervisedExit } from '../launcher/status-line.js'
import type { LaunchRequest, WireConfinement } from '../launcher/wire.js'
import { loadNative } from '../native.js'
import type { ConfinementSteps, ResidentInstance, SubprocessConfinement } from '../types.js'
import { type Child, type ChildExit, childOf, outputPipe, programOf, socketFor } from './child.js'
import { openRuleset } from './launch-kind.js'
import type { LaunchStrategyFactory, RunContext } from './launch-strategy.js'
import { stdioSlots } from './stdio.js'

/** Throws SpawnError at `landlock` (EBADF) when `fd` is not open: nothing is handed to the launcher. */
function assertOpen(fd: number): void {
  try {
    fstatSync(fd)
  } catch {
    throw new SpawnError({ stage: 'landlock', errno: 9, detail: `the ruleset fd ${fd} is not open` })
  }
}

/** The confinement a launcher request carries (the ruleset travels as an fd beside it). */
function wireConfinement(
  steps: ConfinementSteps | undefined,
  namespaces: SubprocessConfinement['namespaces'],
  ruleset: boolean,
  extra: { network?: SubprocessConfinement['network']; cgroupFds: number; oomScoreAdj?: number | undefined },
): WireConfinement | undefined {
  if (steps === undefined) return undefined
  const { network, cgroupFds, oomScoreAdj } = extra
  return {
    dropCaps: steps.dropCaps,
    dropBounding: steps.dropBounding,
    capLast: steps.capLast,
    noNewPrivs: steps.noNewPrivs,
    ruleset,
    landlockFlags: steps.landlockFlags ?? 0,
    filter: steps.filter,
    credentials: steps.credentials,
    rlimits: steps.rlimits ?? [],
    unshareIpc: namespaces?.ipc === true,
    unshareNet: namespaces?.net === true,
    unshareUser: namespaces?.user === true,
    maskKeys: namespaces?.keys === true,
    readOnlyView: namespaces?.view,
    proxyPort: network?.proxyPort,
    cgroupFds,
    oomScoreAdj,
  }
}

type PipePair = [read: number, write: number]

/** The run's pipes, made by one native call: status, then stdin, stdout and stderr where wanted. */
interface RunPipes {
  all: number[]
  status: PipePair
  stdin: PipePair | undefined
  out: PipePair | undefined
  err: PipePair | undefined
}

function makePipes(run: RunContext): RunPipes {
  const { spec, output } = run
  const wantStdin = spec.stdio.stdin !== 'ignore'
  const wantOut = output.wiring.stdout !== 'inherit'
  const wantErr = output.wiring.stderr !== 'inherit'
  const made = loadNative().pipes(1 + Number(wantStdin) + Number(wantOut) + Number(wantErr))
  if (typeof made === 'number') throw new SpawnError({ stage: 'pipe', errno: -made })
  let at = 0
  const pipe = (): PipePair => {
    const p: PipePair = [made[at]!, made[at + 1]!]
    at += 2
    return p
  }
  const status = pipe()
  const stdin = wantStdin ? pipe() : undefined
  const out = wantOut ? pipe() : undefined
  const err = wantErr ? pipe() : undefined
  return { all: made, status, stdin, out, err }
}

type HostEnds = Pick<Child, 'stdin' | 'stdout' | 'stderr' | 'extras'>

/**
 * The fds a request carries: the status write end, then stdin's read end, stdout's and stderr's
 * write ends (or the host's own fds 1 and 2 to inherit), then the ruleset, then the cgroup.procs files.
 */
function childEnds(pipes: RunPipes, rulesetFd: number | undefined, cgroupFds: readonly number[]): number[] {
  const { status, stdin, out, err } = pipes
  const fds = [status[1], ...(stdin ? [stdin[0]] : []), out ? out[1] : 1, err ? err[1] : 2]
  if (rulesetFd !== undefined) fds.push(rulesetFd)
  fds.push(...cgroupFds)
  return fds
}

/** Once the launcher holds its copies: closes ours of the child ends and wires the host ends. */
function wireHostEnds(pipes: RunPipes, output: RunContext['output']): HostEnds {
  const { status, stdin, out, err } = pipes
  const native = loadNative()
  for (const fd of [status[1], stdin?.[0], out?.[1], err?.[1]]) if (fd !== undefined) native.closeFd(fd)
  return {
    stdin: stdin && socketFor(stdin[1], false),
    stdout: out && outputPipe(out[0], output.readers.stdout),
    stderr: err && outputPipe(err[0], output.readers.stderr),
    extras: [],
  }
}

/** A failed request: closes every pipe, or, once wired, the host ends and the status pipe. */
function abandon(pipes: RunPipes, wired: HostEnds | undefined): void {
  const native = loadNative()
  if (wired === undefined) {
    for (const fd of pipes.all) native.closeFd(fd)
    return
  }
  for (const socket of [wired.stdin, wired.stdout, wired.stderr]) socket?.destroy()
  native.closeFd(pipes.status[0])
}

/** The launcher's request for `run` (in `resident`: its command, with the steps it carries). */
function launchRequest(run: RunContext, pipes: RunPipes, ruleset: boolean, resident?: ResidentInstance): LaunchRequest {
  const { spec } = run
  return {
    path: resident ? resident.command.path : programOf(spec.argv, run.env),
    argv: resident ? resident.command.argv : spec.argv,
    env: run.env,
    cwd: spec.cwd,
    stdio: [pipes.stdin ? 'fd' : 'null', 'fd', 'fd'],
    background: spec.supervise === true,
    graceMs: spec.graceMs,
    // A resident run's supervisor raised its oom_score_adj before its /proc went read-only.
    confinement: resident
      ? wireConfinement(resident.steps, undefined, false, { cgroupFds: run.cgroupFds.length })
      : wireConfinement(spec.confinement?.steps, spec.confinement?.namespaces, ruleset, {
          network: spec.confinement?.network,
          cgroupFds: run.cgroupFds.length,
          oomScoreAdj: spec.confinement?.bounds?.oomScoreAdj,
        }),
  }
}

/**
 * A run through the native launcher: the host makes every pipe, hands the launcher the child
 * ends, and wires its own ends while the supervisor starts the command (the two overlap on two
 * cores).
 */
function launchThroughLauncher(run: RunContext, resident?: ResidentInstance): Child {
  const rulesetFd = resident ? undefined : openRuleset(run.spec.confinement?.steps?.ruleset)
  if (rulesetFd !== undefined) assertOpen(rulesetFd)
  const pipes = makePipes(run)
  let wired: HostEnds | undefined
  try {
    const request = launchRequest(run, pipes, rulesetFd !== undefined, resident)
    const whileStarting = () => {
      wired = wireHostEnds(pipes, run.output)
    }
    const launched = launch(request, childEnds(pipes, rulesetFd, run.cgroupFds), whileStarting, resident)
    if (!wired) throw new Error('unreachable: the launcher answered before the request left')
    // The status pipe is read natively (two short lines do not need a net.Socket).
    const statusFd = pipes.status[0]
    const listener = launched.proxyListener
    return {
      ...childOf(launched.supervisorPid, launched.pidfd, false, wired),
      statusLines: (onLine, onEnd) => nativeLines(statusFd, onLine, onEnd),
      ...(listener === undefined ? {} : { proxyListener: (take: (fd: number) => void) => take(listener) }),
    }
  } catch (error) {
    abandon(pipes, wired)
    throw error
  }
}

/** Starts a launched run: through the spawner's own supervisor when it has one, else the native launcher. */
function startLaunched(run: RunContext): Child {
  const { spec, spawner, output } = run
  if (!spawner.launch) return launchThroughLauncher(run)
  return spawner.launch({
    argv: spec.argv,
    env: run.env,
    cwd: spec.cwd,
    stdio: stdioSlots(spec, output.wiring),
    graceMs: spec.graceMs,
    background: spec.supervise === true,
    landlock: spec.confinement?.backend === 'landlock',
    onread: output.readers,
  })
}

/**
 * The command's exit as a supervised run's supervisor reports it; the supervisor's own exit
 * marks the tree gone. `started`: the command is known to have started already.
 */
export function supervisedCommandExit(run: RunContext, child: Child, started: boolean): Promise<ChildExit> {
  const treeExit = child.exit.then((exit) => {
    run.markTreeGone()
    return exit
  })
  return supervisedExit(child, { treeExit, stderr: run.output.collectors.stderr, started, command: run.spec.argv[0] })
}

/** A supervisor's own grace (it kills at graceMs) plus the time it may take to do so. */
export const supervisedKillDelayMs = (graceMs: number): number => graceMs + 2000

/** The strategy of a `launched` run. */
export const launchedRun: LaunchStrategyFactory = (run) => {
  const signalTree = (child: Child, signal: NodeJS.Signals) => {
    child.kill(signal) // the supervisor forwards to every member
  }
  return {
    start: () => startLaunched(run),
    // The native launcher answers once the command exec'd; a supervisor the host started itself says "started".
    commandExit: (child) => supervisedCommandExit(run, child, run.spawner.launch === undefined),
    treeGoneNow: () => false,
    signalTree,
    killDelayMs: supervisedKillDelayMs,
    killAfterGrace(child) {
      // The supervisor kills at its own grace; reaching here means it is stuck: last resort.
      signalTree(child, 'SIGKILL')
      child.kill('SIGKILL')
    },
    forceKill(child) {
      // The launcher's death (with the host) takes every supervisor and its tree down; while the
      // host lives on, ask the supervisor (TERM escalates at its grace).
      child.kill('SIGTERM')
    },
    release() {},
  }
}

/** The strategy of a `resident` run: a launched run whose launcher is its sandbox's instance. */
export const residentRun: LaunchStrategyFactory = (run) => {
  const resident = run.spec.confinement?.resident
  if (resident === undefined) throw new Error('residentRun: the spec names no instance')
  return { ...launchedRun(run), start: () => launchThroughLauncher(run, resident) }
}
