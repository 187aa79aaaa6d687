/**
 * The launcher of this host thread: one `cordon-exec zygote`, started on first use, that forks a
 * supervisor per run (a subreaper outside the command's sandbox; see native/supervisor.h). The
 * host talks to it over a socket pair with one synchronous request per run, so `spawn()` stays
 * synchronous: the reply arrives once the command has exec'd (or failed, with stage and errno).
 * The zygote dies with this thread (parent-death signal); a dead zygote is replaced on the next
 * request, and a request that never reached it is retried once on the new one.
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
  control: number
  pid: number
  alive: boolean
}

let zygote: Zygote | undefined

function startZygote(native: NativeAddon): Zygote {
  const helper = helperPath()
  if (helper === undefined) throw spawnFailure('launcher', 2, 'cordon-exec', 'the cordon-exec helper was not built')
  const pair = native.socketPair()
  if (typeof pair === 'number') throw spawnFailure('launcher', -pair, undefined, 'socketpair')
  const [host, theirs] = pair
  const result = native.spawn(
    helper,
    ['cordon-exec', 'zygote', '--control-fd', '3', '--host-pid', String(process.pid)],
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
  const z: Zygote = { control: host, pid: result.pid, alive: true }
  // The zygote must not keep the host alive: its watch does not hold the event loop.
  native.watch(result.pidfd, true, false, () => retire(native, z))
  return z
}

/** Launches one run through this thread's launcher; throws SpawnError (stage, errno) when it could not start. */
export function launch(request: LaunchRequest, fds: readonly number[]): LaunchedRun {
  const native = loadNative()
  const message = encodeLaunchRequest(request)
  for (let attempt = 0; ; attempt++) {
    zygote ??= startZygote(native)
    const z = zygote
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
  if (zygote === z) zygote = undefined
  if (z.alive) {
    z.alive = false
    native.closeFd(z.control) // EOF: the zygote exits; its watch reaps it
  }
}

/** The launcher's pid, when one runs (tests, leak checks). */
export function launcherPid(): number | undefined {
  return zygote?.alive ? zygote.pid : undefined
}
