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
import { readFileSync, readSync } from 'node:fs'
import { spawnFailure } from '../process/child.js'
import { nativePlanOf } from '../process/launch-kind.js'
import type { ResidentInstance } from '../types.js'
import { decodeLaunchReply, encodeLaunchRequest, type LaunchRequest, REPLY_BYTES } from './wire.js'
import { helperMissingReason, helperPath, loadNative, type NativeAddon, Slot } from '../native.js'

const EBADF = 9
const EPIPE = 32
const ECONNRESET = 104

/** How long a request may take before the launcher is declared stuck (ms). */
const REQUEST_TIMEOUT_MS = 30_000

/** One launched run: the supervisor (the tree's root). */
export interface LaunchedRun {
  supervisorPid: number
  /** The command's pid (the supervisor's child). */
  commandPid: number
  /** pidfd of the supervisor (not our child: watched, never reaped here). */
  pidfd: number
  /** A network allow-list's listener, made in the run's network namespace (the caller owns it). */
  proxyListener?: number | undefined
}

interface Zygote {
  key: string
  control: number
  pid: number
  alive: boolean
  /** A resident instance's launcher: its supervisors' pids are of their own namespaces. */
  resident: boolean
  /** A resident instance's stderr until its first answer: bwrap's own words when it refuses to start. */
  stderr?: number | undefined
}

/** What a launcher applies to itself (its runs inherit it). */
interface LauncherSelf {
  dropBounding: boolean
  capLast: number
  noNewPrivs: boolean
  filter: Buffer | undefined
  /** One private IPC namespace for all of this launcher's runs (only without a user namespace). */
  unshareIpc: boolean
  /** A private mount namespace in which /proc/keys reads empty (root only). */
  maskKeys: boolean
}

const zygotes = new Map<string, Zygote>()
/** Resident instances their sandbox let go of: a spec confined before still runs, in one that ends after it. */
const retiredResidents = new Set<string>()

// A program's hex, once per Buffer (the sandbox memoises its programs, so the same object comes back).
const programKeys = new WeakMap<Buffer, string>()

function keyOf(self: LauncherSelf | undefined): string {
  if (self === undefined) return 'plain'
  let program = ''
  if (self.filter) {
    program = programKeys.get(self.filter) ?? self.filter.toString('hex')
    programKeys.set(self.filter, program)
  }
  return `${self.dropBounding ? 'b' : ''}${self.noNewPrivs ? 'n' : ''}${self.unshareIpc ? 'i' : ''}${self.maskKeys ? 'k' : ''}:${program}`
}

function startZygote(native: NativeAddon, key: string, self: LauncherSelf | undefined): Zygote {
  const helper = helperPath()
  if (helper === undefined) throw spawnFailure('launcher', 2, 'cordon-exec', helperMissingReason())
  const pair = native.socketPair()
  if (typeof pair === 'number') throw spawnFailure('launcher', -pair, undefined, 'socketpair')
  const [host, theirs] = pair
  const args = ['cordon-exec', 'zygote', '--control-fd', '3', '--host-pid', String(process.pid)]
  if (self?.dropBounding) args.push('--drop-bounding', '--cap-last', String(self.capLast))
  if (self?.noNewPrivs) args.push('--no-new-privs')
  if (self?.filter) args.push('--seccomp-hex', self.filter.toString('hex'))
  if (self?.unshareIpc) args.push('--unshare-ipc')
  if (self?.maskKeys) args.push('--mask-keys')
  const result = native.spawn(helper, args, [], '/', [Slot.Null, Slot.Null, Slot.Inherit, theirs], null)
  native.closeFd(theirs)
  if (!('pid' in result)) {
    native.closeFd(host)
    throw spawnFailure('launcher', result.errno, helper, `starting the launcher failed at ${result.stage}`)
  }
  return watched(native, { key, control: host, pid: result.pid, alive: true, resident: false }, result.pidfd)
}

/** `z`, retired when it exits; the watch does not keep the host alive. */
function watched(native: NativeAddon, z: Zygote, pidfd: number): Zygote {
  native.watch(pidfd, true, false, () => retire(native, z))
  return z
}

/** Starts a resident instance: its bwrap, the launcher inside on fd 3 (`--die-with-parent`). */
function startResident(native: NativeAddon, key: string, instance: ResidentInstance): Zygote {
  const pair = native.socketPair()
  if (typeof pair === 'number') throw spawnFailure('launcher', -pair, undefined, 'socketpair')
  const [host, theirs] = pair
  const [bwrap, ...rest] = instance.argv
  const slots = [Slot.Null, Slot.Null, Slot.Pipe, theirs]
  const plan = nativePlanOf(instance.wrapperSteps) ?? null
  const result = native.spawn(bwrap as string, [bwrap as string, ...rest], [], '/', slots, plan)
  native.closeFd(theirs)
  if (!('pid' in result)) {
    native.closeFd(host)
    throw spawnFailure('launcher', result.errno, bwrap, `starting the sandbox instance failed at ${result.stage}`)
  }
  const z = { key, control: host, pid: result.pid, alive: true, resident: true, stderr: result.fds[2] ?? undefined }
  return watched(native, z, result.pidfd)
}

/**
 * What an instance that ended before it answered said: bwrap's line when it refused to build the
 * sandbox. Read only once the control socket saw EOF, so bwrap, which holds both, is gone: the
 * read cannot block.
 */
function lastWords(z: Zygote): string | undefined {
  if (z.stderr === undefined) return undefined
  const buffer = Buffer.alloc(4096)
  let length = 0
  try {
    for (let n = 1; n > 0 && length < buffer.length; length += n)
      n = readSync(z.stderr, buffer, length, buffer.length - length, null)
  } catch {
    // nothing more to read
  }
  return /bwrap: [^\n]*/.exec(buffer.toString('utf8', 0, length))?.[0]
}

/** An instance answered: its stderr is not read any more (its launcher ignores SIGPIPE). */
function stopWatchingStderr(native: NativeAddon, z: Zygote): void {
  if (z.stderr === undefined) return
  native.closeFd(z.stderr)
  z.stderr = undefined
}

/** What the launcher of a request's kind applies to itself, and the request without it. */
function splitRequest(request: LaunchRequest): { self: LauncherSelf | undefined; message: Buffer } {
  // What the launcher of this kind already applied does not travel with the request.
  const c = request.confinement
  if (c === undefined) return { self: undefined, message: encodeLaunchRequest(request) }
  // An IPC namespace is made once per launcher (~70 us per run otherwise): its runs share it, and
  // no host object is in it. Through a user namespace (unprivileged) it stays per run.
  const launcherIpc = c.unshareIpc === true && !c.unshareUser
  const self: LauncherSelf = {
    dropBounding: c.dropBounding,
    capLast: c.capLast,
    noNewPrivs: c.noNewPrivs,
    filter: c.filter,
    unshareIpc: launcherIpc,
    // Per run (the supervisor's own mount namespace): a launcher with one of its own would miss
    // the mounts the host makes after it started (a session's tmpfs TMPDIR).
    maskKeys: false,
  }
  const confinement = {
    ...c,
    dropBounding: false,
    noNewPrivs: false,
    filter: undefined,
    unshareIpc: c.unshareIpc && !launcherIpc,
  }
  return { self, message: encodeLaunchRequest({ ...request, confinement }) }
}

/** Sends `message` with `fds` to the launcher of `self`'s kind, or to `resident` (a fresh one once, when the first is unreachable). */
function send(
  native: NativeAddon,
  self: LauncherSelf | undefined,
  message: Buffer,
  fds: readonly number[],
  resident?: ResidentInstance,
): Zygote {
  const key = resident ? `resident:${resident.key}` : keyOf(self)
  for (let attempt = 0; ; attempt++) {
    let z = zygotes.get(key)
    if (z === undefined) {
      z = resident ? startResident(native, key, resident) : startZygote(native, key, self)
      zygotes.set(key, z)
    }
    const sent = native.launcherSend(z.control, message, fds)
    if (sent === 0) return z
    // A descriptor of ours was bad: the launcher is fine, the request is not.
    if (-sent === EBADF) throw spawnFailure('launcher', EBADF, undefined, 'a descriptor to pass was not open')
    // The request never left: it may go to a fresh launcher once.
    retire(native, z)
    if (attempt > 0) throw spawnFailure('launcher', -sent, undefined, 'the launcher could not be reached')
  }
}

/** A successful reply's descriptors: the supervisor's pidfd, then (`proxied`) the proxy listener; a short reply throws. */
function replyFds(
  native: NativeAddon,
  fds: readonly number[],
  proxied: boolean,
): { pidfd: number; proxyListener: number | undefined } {
  const [pidfd, ...extra] = fds
  const proxyListener = proxied ? extra.shift() : undefined
  for (const fd of extra) native.closeFd(fd)
  if (pidfd !== undefined && (!proxied || proxyListener !== undefined)) return { pidfd, proxyListener }
  for (const fd of [pidfd, proxyListener]) if (fd !== undefined) native.closeFd(fd)
  throw spawnFailure('launcher', 71, undefined, 'short reply')
}

/** The run the supervisor answered with, or the SpawnError it reported. */
function receive(native: NativeAddon, z: Zygote, request: LaunchRequest, proxied: boolean): LaunchedRun {
  const answer = native.launcherReceive(z.control, REPLY_BYTES, REQUEST_TIMEOUT_MS)
  if (typeof answer === 'number') {
    // It left and was maybe acted on: never sent again.
    // EOF, or a reset with our request unread: the instance is gone.
    const words = answer === -EPIPE || answer === -ECONNRESET ? lastWords(z) : undefined
    retire(native, z)
    throw spawnFailure('launcher', -answer, undefined, words ?? 'the launcher did not answer')
  }
  stopWatchingStderr(native, z)
  const reply = decodeLaunchReply(answer.reply)
  if (!reply.ok) {
    for (const fd of answer.fds) native.closeFd(fd)
    // No supervisor answered: the launcher could not confine itself; the next run gets a fresh one.
    if (reply.supervisorPid < 0) retire(native, z)
    const path = reply.stage === 'exec' ? request.path : reply.stage === 'chdir' ? request.cwd : undefined
    throw spawnFailure(reply.stage, reply.errno, path)
  }
  const { pidfd, proxyListener } = replyFds(native, answer.fds, proxied)
  // An instance's supervisor is pid 1 of its own namespace: its pid here is the pidfd's.
  const supervisorPid = z.resident ? pidOfPidfd(pidfd) : reply.supervisorPid
  return { supervisorPid, commandPid: reply.commandPid, pidfd, proxyListener }
}

/** The pid, in this host's namespace, of the process `pidfd` refers to (-1: gone or unknown). */
function pidOfPidfd(pidfd: number): number {
  const match = /^Pid:\s*(-?\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${pidfd}`, 'utf8'))
  return match ? Number(match[1]) : -1
}

/**
 * Launches one run through this thread's launcher (`fds`: the status pipe's write end, the `fd`
 * stdio slots, the ruleset); `whileStarting` runs after the request left and before the answer is
 * read, so the host's own wiring overlaps the supervisor's work. Throws SpawnError (stage, errno)
 * when the run could not start.
 */
export function launch(
  request: LaunchRequest,
  fds: readonly number[],
  whileStarting?: () => void,
  resident?: ResidentInstance,
): LaunchedRun {
  const native = loadNative()
  // An instance's supervisors applied their part already: the request carries only the rest.
  const { self, message } = resident
    ? { self: undefined, message: encodeLaunchRequest(request) }
    : splitRequest(request)
  const z = send(native, self, message, fds, resident)
  whileStarting?.()
  try {
    return receive(
      native,
      z,
      request,
      request.confinement?.proxyPort !== undefined || resident?.proxyPort !== undefined,
    )
  } finally {
    if (resident && retiredResidents.has(resident.key)) retire(native, z)
  }
}

function retire(native: NativeAddon, z: Zygote): void {
  if (zygotes.get(z.key) === z) zygotes.delete(z.key)
  stopWatchingStderr(native, z)
  if (z.alive) {
    z.alive = false
    native.closeFd(z.control) // EOF: the zygote exits; its watch reaps it
  }
}

/** Ends the resident instance `key` once its runs have (its launcher sees the control socket close). */
export function retireResident(key: string): void {
  retiredResidents.add(key)
  const z = zygotes.get(`resident:${key}`)
  if (z !== undefined) retire(loadNative(), z)
}

/** The pids of the launchers that run (tests, leak checks). */
export function launcherPids(): number[] {
  return [...zygotes.values()].filter((z) => z.alive).map((z) => z.pid)
}
