/**
 * The launchers of this host thread: `cordon-exec zygote` processes, started on first use, that
 * fork a supervisor per run (a subreaper outside the command's sandbox; see native/supervisor.h).
 * One launcher per kind of run: a plain one for unconfined supervised runs, and one per seccomp
 * program for confined runs, which applies to itself — once — the program (attached and
 * JIT-compiled once), no_new_privs and the dropped bounding set, so its runs inherit them instead
 * of paying for them per spawn (measured: ~0.2 ms of a ~1.1 ms confined spawn here). The host talks
 * to a launcher over a socket pair with one synchronous request per run, so `spawn()` stays
 * synchronous: the run's supervisor replies itself, once the command has exec'd (or failed, with
 * stage and errno). A launcher dies with this thread (parent-death signal); a dead one is
 * replaced on the next request, and a request that never reached it is retried once.
 */
import { spawnFailure } from './child.js'
import { decodeLaunchReply, encodeLaunchRequest, type LaunchRequest, REPLY_BYTES } from './launch-wire.js'
import { helperPath, loadNative, type NativeAddon, Slot } from './native.js'

const EBADF = 9

/** How long a request may take before the launcher is declared stuck (ms). */
const REQUEST_TIMEOUT_MS = 30_000

/** One launched run: the supervisor (the tree's root) and the host's descriptors. */
export interface LaunchedRun {
  supervisorPid: number
  /** The command's pid (the supervisor's child). */
  commandPid: number
  /** pidfd of the supervisor (not our child: watched, never reaped here). */
  pidfd: number
  /** Read end of the status pipe ("exit N" / "signal N"). */
  statusFd: number
  /** Host ends of the stdio slots that were pipes, in slot order (null elsewhere). */
  stdio: [number | null, number | null, number | null]
}

interface Zygote {
  key: string
  control: number
  pid: number
  alive: boolean
}

/** What a launcher applies to itself (its runs inherit it). */
interface LauncherSelf {
  dropBounding: boolean
  capLast: number
  noNewPrivs: boolean
  filter: Buffer | undefined
}

const zygotes = new Map<string, Zygote>()

function keyOf(self: LauncherSelf | undefined): string {
  if (self === undefined) return 'plain'
  return `${self.dropBounding ? 'b' : ''}${self.noNewPrivs ? 'n' : ''}:${self.filter?.toString('hex') ?? ''}`
}

function startZygote(native: NativeAddon, key: string, self: LauncherSelf | undefined): Zygote {
  const helper = helperPath()
  if (helper === undefined) throw spawnFailure('launcher', 2, 'cordon-exec', 'the cordon-exec helper was not built')
  const pair = native.socketPair()
  if (typeof pair === 'number') throw spawnFailure('launcher', -pair, undefined, 'socketpair')
  const [host, theirs] = pair
  const args = ['cordon-exec', 'zygote', '--control-fd', '3', '--host-pid', String(process.pid)]
  if (self?.dropBounding) args.push('--drop-bounding', '--cap-last', String(self.capLast))
  if (self?.noNewPrivs) args.push('--no-new-privs')
  if (self?.filter) args.push('--seccomp-hex', self.filter.toString('hex'))
  const result = native.spawn(
    helper,
    args,
    [],
    '/',
    [Slot.Null, Slot.Null, Slot.Inherit, theirs],
    null,
  )
  native.closeFd(theirs)
  if (!('pid' in result)) {
    native.closeFd(host)
    throw spawnFailure('launcher', result.errno, helper, `starting the launcher failed at ${result.stage}`)
  }
  const z: Zygote = { key, control: host, pid: result.pid, alive: true }
  // The zygote must not keep the host alive: its watch does not hold the event loop.
  native.watch(result.pidfd, true, false, () => retire(native, z))
  return z
}

/** Launches one run through this thread's launcher; throws SpawnError (stage, errno) when it could not start. */
export function launch(request: LaunchRequest, fds: readonly number[]): LaunchedRun {
  const native = loadNative()
  // What the launcher of this kind already applied does not travel with the request.
  const c = request.confinement
  const self: LauncherSelf | undefined = c && {
    dropBounding: c.dropBounding,
    capLast: c.capLast,
    noNewPrivs: c.noNewPrivs,
    filter: c.filter,
  }
  const key = keyOf(self)
  const message = encodeLaunchRequest(
    c ? { ...request, confinement: { ...c, dropBounding: false, noNewPrivs: false, filter: undefined } } : request,
  )
  for (let attempt = 0; ; attempt++) {
    let z = zygotes.get(key)
    if (z === undefined) {
      z = startZygote(native, key, self)
      zygotes.set(key, z)
    }
    const answer = native.launcherCall(z.control, message, fds, REPLY_BYTES, REQUEST_TIMEOUT_MS)
    if (!('reply' in answer)) {
      // A descriptor of ours was bad: the launcher is fine, the request is not.
      if (!answer.sent && answer.errno === EBADF)
        throw spawnFailure('launcher', EBADF, undefined, 'a descriptor to pass was not open')
      // A request that never left may go to a fresh launcher; one that left may have run.
      retire(native, z)
      if (!answer.sent && attempt === 0) continue
      throw spawnFailure('launcher', answer.errno, undefined, 'the launcher did not answer')
    }
    const reply = decodeLaunchReply(answer.reply)
    if (!reply.ok) {
      for (const fd of answer.fds) native.closeFd(fd)
      throw spawnFailure(
        reply.stage,
        reply.errno,
        reply.stage === 'exec' ? request.path : reply.stage === 'chdir' ? request.cwd : undefined,
      )
    }
    const [pidfd, statusFd, ...pipes] = answer.fds
    if (pidfd === undefined || statusFd === undefined) throw spawnFailure('launcher', 71, undefined, 'short reply')
    const stdio: [number | null, number | null, number | null] = [null, null, null]
    for (let i = 0; i < 3; i++) if (request.stdio[i] === 'pipe') stdio[i] = pipes.shift() ?? null
    return { supervisorPid: reply.supervisorPid, commandPid: reply.commandPid, pidfd, statusFd, stdio }
  }
}

function retire(native: NativeAddon, z: Zygote): void {
  if (zygotes.get(z.key) === z) zygotes.delete(z.key)
  if (z.alive) {
    z.alive = false
    native.closeFd(z.control) // EOF: the zygote exits; its watch reaps it
  }
}

/** The pids of the launchers that run (tests, leak checks). */
export function launcherPids(): number[] {
  return [...zygotes.values()].filter((z) => z.alive).map((z) => z.pid)
}
