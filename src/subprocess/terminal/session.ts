/**
 * Which processes belong to a terminal session, read from /proc (Linux). The top process of a
 * terminal leads its session, so the session id is its pid; every process forked inside keeps
 * that id until it calls setsid(). A snapshot is the session's members plus every descendant of
 * a member or of the top process (so a child that left the session is still seen while its
 * parent is), never counting zombies: PID 1 on some hosts reaps orphans seconds late.
 *
 * Pid reuse: the kernel keeps a pid number allocated while any process uses it as a session or
 * group id, so members with our session id are ours while the leader's number is held. Once
 * the leader is reaped and the session empties, the number may come back as another session's
 * leader; the snapshot checks the leader's start time and treats a stranger there as "our
 * session is gone".
 */
import { readdirSync, readFileSync } from 'node:fs'

/** The fields of /proc/<pid>/stat the terminal code reads. */
export interface ProcStat {
  pid: number
  /** The command name between the parentheses (may itself hold spaces or parentheses). */
  comm: string
  /** R, S, D, T, t, Z, X, I… */
  state: string
  ppid: number
  pgrp: number
  session: number
  /** The controlling terminal's device number (0 without one). */
  ttyNr: number
  /** The foreground process group of the process's controlling terminal (-1 without one). */
  tpgid: number
  /** Clock ticks since boot at which the process started: with the pid, its identity. */
  startTime: string
}

/** The stat of `pid` now, or undefined when it is gone (or unreadable). */
export function readStat(pid: number | string): ProcStat | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  const close = text.lastIndexOf(')')
  const rest = text.slice(close + 2).split(' ')
  return {
    pid: Number(pid),
    comm: text.slice(text.indexOf('(') + 1, close),
    state: rest[0] ?? '',
    ppid: Number(rest[1]),
    pgrp: Number(rest[2]),
    session: Number(rest[3]),
    ttyNr: Number(rest[4]),
    tpgid: Number(rest[5]),
    startTime: rest[19] ?? '',
  }
}

/** The `/dev/pts/N` path of a controlling terminal's device number, when it is a Unix98 pty (majors 136-143). */
export function ptsPathOf(ttyNr: number): string | undefined {
  // The kernel's encoding: major in bits 8-19, minor in bits 0-7 and 20-31.
  const major = (ttyNr >> 8) & 0xfff
  const minor = (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00)
  if (major < 136 || major > 143) return undefined
  return `/dev/pts/${(major - 136) * 256 + minor}`
}

/** Whether a stat is a zombie or dead: it holds no resources and runs no code. */
export function isDead(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X' || stat.state === 'x'
}

/** Whether a process is stopped (job control or tracing): a pending TERM waits for SIGCONT. */
export function isStopped(stat: ProcStat): boolean {
  return stat.state === 'T' || stat.state === 't'
}

/** The stat of every process on the host now. */
export function readAllStats(): ProcStat[] {
  const out: ProcStat[] = []
  for (const entry of readdirSync('/proc')) {
    const c = entry.charCodeAt(0)
    if (c < 48 || c > 57) continue
    const stat = readStat(entry)
    if (stat) out.push(stat)
  }
  return out
}

/** Identifies one terminal session: its leader's pid (= session id) and the leader's start time. */
export interface SessionIdentity {
  sid: number
  /** The leader's start time read right after the fork; undefined when it was already gone. */
  leaderStartTime: string | undefined
}

/** Whether the session id now names a different process (the number was reused: ours is empty). */
export function sessionIdReused(id: SessionIdentity, stats?: ReadonlyMap<number, ProcStat>): boolean {
  const leader = stats ? stats.get(id.sid) : readStat(id.sid)
  return leader !== undefined && leader.startTime !== id.leaderStartTime
}

/**
 * The live processes of the session now: members (session id), descendants of a member or of
 * the leader, zombies excluded. Empty when the session id was reused by a stranger.
 */
export function sessionProcesses(id: SessionIdentity): ProcStat[] {
  const all = readAllStats()
  const byPid = new Map(all.map((s) => [s.pid, s]))
  if (sessionIdReused(id, byPid)) return []
  const children = new Map<number, ProcStat[]>()
  for (const s of all) {
    const list = children.get(s.ppid)
    if (list) list.push(s)
    else children.set(s.ppid, [s])
  }
  const found = new Map<number, ProcStat>()
  const queue: ProcStat[] = all.filter((s) => s.session === id.sid)
  const leader = byPid.get(id.sid)
  if (leader) queue.push(leader)
  while (queue.length > 0) {
    const s = queue.pop()!
    if (found.has(s.pid)) continue
    found.set(s.pid, s)
    for (const child of children.get(s.pid) ?? []) queue.push(child)
  }
  return [...found.values()].filter((s) => !isDead(s)).sort((a, b) => a.pid - b.pid)
}

/**
 * The program's own group under a launcher: the first group started below the launcher's own
 * (the earliest-started process that leads a group of its own and whose parent is in the
 * leader's group: the launcher itself, or a wrapper such as bwrap's init standing between; jobs
 * the program starts have the program as parent, and orphans the launcher adopts later start
 * later). Undefined while the launcher has not started the program yet.
 */
export function programGroupLeader(members: readonly ProcStat[], sid: number): ProcStat | undefined {
  const byPid = new Map(members.map((p) => [p.pid, p]))
  let first: ProcStat | undefined
  for (const p of members) {
    if (p.pgrp !== p.pid || p.pid === sid || p.session !== sid) continue
    if (byPid.get(p.ppid)?.pgrp !== sid) continue
    if (!first || BigInt(p.startTime) < BigInt(first.startTime)) first = p
  }
  return first
}
