/**
 * The foreground job of a terminal session, read from /proc (Linux; x86_64 and aarch64 syscall
 * tables for the input wait). Facts, not guesses:
 *
 * - the foreground group is `tpgid` from the stat of a live session member (the kernel's own
 *   answer to tcgetpgrp, so no ioctl on the master is needed);
 * - its command is the group leader's `comm` and `cmdline` (the oldest live member's when the
 *   leader is gone);
 * - "waiting for input" means a thread of a foreground member is blocked in a system call
 *   (`/proc/<pid>/task/<tid>/syscall`) that waits to read one of the process's descriptors on
 *   THIS terminal: `read`/`readv`/`pread64` on such an fd, `poll`/`ppoll`/`select`/`pselect6` whose
 *   read set (read from `/proc/<pid>/mem`) holds one, or `epoll_*wait*` on an epoll instance whose
 *   interest list (`/proc/<pid>/fdinfo/<epfd>`) watches one for input.
 *
 * What it cannot see: a wait whose set it may not read (another uid, ptrace-restricted hosts:
 * `syscall` and `mem` need ptrace access) is reported as not waiting; io_uring or a read on a
 * descriptor duplicated from another terminal are not recognised; on other architectures only the
 * group and its command are reported. Everything is one instant: the job may change right after.
 */
import { openSync, readdirSync, readFileSync, readlinkSync, readSync, closeSync } from 'node:fs'
import { isDead, readAllStats, sessionIdReused, type ProcStat, type SessionIdentity } from './session.js'
import type { SubprocessTerminalForeground, SubprocessTerminalInputWait } from '../types.js'

type WaitKind = 'read' | 'poll' | 'select' | 'epoll'

/** Syscall numbers of the calls that wait for input, per architecture (asm/unistd.h). */
const WAIT_SYSCALLS: Readonly<Record<string, ReadonlyMap<number, [string, WaitKind]>>> = {
  x64: new Map([
    [0, ['read', 'read']],
    [17, ['pread64', 'read']],
    [19, ['readv', 'read']],
    [7, ['poll', 'poll']],
    [271, ['ppoll', 'poll']],
    [23, ['select', 'select']],
    [270, ['pselect6', 'select']],
    [232, ['epoll_wait', 'epoll']],
    [281, ['epoll_pwait', 'epoll']],
    [441, ['epoll_pwait2', 'epoll']],
  ]),
  arm64: new Map([
    [63, ['read', 'read']],
    [67, ['pread64', 'read']],
    [65, ['readv', 'read']],
    [73, ['ppoll', 'poll']],
    [72, ['pselect6', 'select']],
    [22, ['epoll_pwait', 'epoll']],
    [441, ['epoll_pwait2', 'epoll']],
  ]),
}

const POLLIN = 0x1
const POLLPRI = 0x2
const POLLRDNORM = 0x40
const EPOLLIN = 0x1
const EPOLLPRI = 0x2

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1')
  } catch {
    return undefined
  }
}

/** `len` bytes of the process's memory at `address`, or undefined when it may not be read. */
function readMemory(pid: number, address: number, len: number): Buffer | undefined {
  if (len <= 0 || len > 1 << 20 || !Number.isSafeInteger(address)) return undefined
  let fd: number | undefined
  try {
    fd = openSync(`/proc/${pid}/mem`, 'r')
    const buf = Buffer.alloc(len)
    return readSync(fd, buf, 0, len, address) === len ? buf : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** The process's descriptors that refer to the terminal `ptsPath`. */
function terminalFds(pid: number, ptsPath: string): Set<number> {
  const fds = new Set<number>()
  let entries: string[]
  try {
    entries = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return fds
  }
  for (const entry of entries) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${entry}`) === ptsPath) fds.add(Number(entry))
    } catch {
      // closed meanwhile
    }
  }
  return fds
}

/** The terminal fds a blocked poll() waits to read: its `struct pollfd` array (8 bytes each) at `at`. */
function polledFds(pid: number, at: number, count: number, ttyFds: ReadonlySet<number>): number[] {
  // struct pollfd { int fd; short events; short revents; }
  const mem = readMemory(pid, at, count * 8)
  if (!mem) return []
  const out: number[] = []
  for (let i = 0; i < count; i++) {
    const fd = mem.readInt32LE(i * 8)
    const events = mem.readInt16LE(i * 8 + 4)
    if (ttyFds.has(fd) && (events & (POLLIN | POLLPRI | POLLRDNORM)) !== 0) out.push(fd)
  }
  return out
}

/** The terminal fds a blocked select() waits to read: `nfds`, and the read fd_set at `at`. */
function selectedFds(pid: number, nfds: number, at: number, ttyFds: ReadonlySet<number>): number[] {
  // The read fd_set: a bitmap of unsigned longs, little-endian on both tables.
  const wanted = [...ttyFds].filter((fd) => fd < nfds)
  if (wanted.length === 0 || at === 0) return []
  const mem = readMemory(pid, at, Math.ceil(nfds / 64) * 8)
  if (!mem) return []
  return wanted.filter((fd) => ((mem[fd >> 3] ?? 0) & (1 << (fd & 7))) !== 0)
}

/** The terminal fds a blocked epoll_wait() on `epfd` waits to read: its interest list in fdinfo. */
function epolledFds(pid: number, epfd: number, ttyFds: ReadonlySet<number>): number[] {
  // One "tfd: N events: HEX data: …" line per watched descriptor.
  const info = readText(`/proc/${pid}/fdinfo/${epfd}`)
  if (info === undefined) return []
  const out: number[] = []
  for (const match of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)) {
    const fd = Number(match[1])
    if (ttyFds.has(fd) && (Number.parseInt(match[2] ?? '0', 16) & (EPOLLIN | EPOLLPRI)) !== 0) out.push(fd)
  }
  return out
}

/** Which of `ttyFds` the blocked call (its kind and first arguments) waits to read; empty when none. */
function waitedFds(pid: number, kind: WaitKind, args: number[], ttyFds: ReadonlySet<number>): number[] {
  const [a0 = -1, a1 = 0] = args
  if (kind === 'read') return ttyFds.has(a0) ? [a0] : []
  if (kind === 'poll') return polledFds(pid, a0, a1, ttyFds)
  if (kind === 'select') return selectedFds(pid, a0, a1, ttyFds)
  return epolledFds(pid, a0, ttyFds)
}

/** How `pid` waits for input on the terminal `ptsPath`, or undefined when no thread of it does. */
export function inputWaitOf(pid: number, ptsPath: string): SubprocessTerminalInputWait | undefined {
  const table = WAIT_SYSCALLS[process.arch]
  if (!table) return undefined
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return undefined
  }
  let ttyFds: Set<number> | undefined
  for (const tid of tasks) {
    const line = readText(`/proc/${pid}/task/${tid}/syscall`)
    if (line === undefined || line.startsWith('running')) continue
    const [nr, ...hex] = line.trim().split(' ')
    const call = table.get(Number(nr))
    if (!call) continue
    ttyFds ??= terminalFds(pid, ptsPath)
    if (ttyFds.size === 0) return undefined
    const args = hex.slice(0, 6).map((h) => Number.parseInt(h, 16))
    const fds = waitedFds(pid, call[1], args, ttyFds)
    if (fds.length > 0) return { pid, syscall: call[0], fds }
  }
  return undefined
}

function argvOf(pid: number): string[] {
  const raw = readText(`/proc/${pid}/cmdline`)
  if (!raw) return []
  const parts = Buffer.from(raw, 'latin1').toString('utf8').split('\0')
  if (parts.at(-1) === '') parts.pop()
  return parts
}

const older = (a: ProcStat, b: ProcStat): ProcStat => (BigInt(a.startTime) <= BigInt(b.startTime) ? a : b)

/**
 * The session's foreground job now, or undefined when no live member of the session is left (or
 * none has the terminal). `ptsPath` is the terminal's slave (`/dev/pts/N`); `programPgid` the
 * program's group (the leader's, or under a launcher its first child's).
 */
export function inspectForeground(
  id: SessionIdentity,
  ptsPath: string,
  programPgid: number | undefined,
): SubprocessTerminalForeground | undefined {
  const all = readAllStats()
  const byPid = new Map(all.map((s) => [s.pid, s]))
  if (sessionIdReused(id, byPid)) return undefined
  const withTerminal = all.filter((s) => s.session === id.sid && !isDead(s) && s.tpgid > 0)
  const asked = withTerminal.find((s) => s.pid === id.sid) ?? withTerminal[0]
  if (!asked) return undefined
  const pgid = asked.tpgid
  const group = all.filter((s) => s.pgrp === pgid && s.session === id.sid && !isDead(s))
  const leader = byPid.get(pgid)
  const reported = leader && !isDead(leader) ? leader : group.length > 0 ? group.reduce(older) : leader
  // The leader first: it is the job's own process; the rest are its pipeline partners.
  const candidates = [...group].sort((a, b) => (a.pid === pgid ? -1 : b.pid === pgid ? 1 : a.pid - b.pid))
  let inputWait: SubprocessTerminalInputWait | undefined
  for (const member of candidates) {
    inputWait = inputWaitOf(member.pid, ptsPath)
    if (inputWait) break
  }
  return {
    pgid,
    programGroup: pgid === id.sid || pgid === programPgid,
    pid: reported?.pid ?? pgid,
    command: reported?.comm ?? '',
    argv: reported ? argvOf(reported.pid) : [],
    waitingForInput: inputWait !== undefined,
    ...(inputWait ? { inputWait } : {}),
  }
}
