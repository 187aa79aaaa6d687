/**
 * Is anything of a process group still running? PID 1 on some hosts reaps orphans seconds late,
 * so `kill(-pgid, 0)` sees zombies as alive; this reads /proc and ignores zombies instead.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** The pid, state letter and pgrp of one /proc/<pid>/stat line (comm may hold spaces or parens). */
function statOf(pid: string): { state: string; pgrp: number } | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { state: rest[0] ?? '', pgrp: Number(rest[2]) }
}

/** The live (non-zombie) members of process group `pgid`, read from /proc now. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    const c = entry.charCodeAt(0)
    if (c < 48 || c > 57) continue
    const stat = statOf(entry)
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') members.push(Number(entry))
  }
  return members
}

/** Whether any non-zombie process is still in group `pgid`. */
export function groupAlive(pgid: number): boolean {
  // ESRCH proves the group is empty, zombies included (5 µs); only a "yes" needs the /proc scan
  // (3-4 ms on a busy host), which tells live members from zombies PID 1 has not reaped yet.
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
  }
  // Without /proc (macOS) the kernel's "yes" stands: zombies count as alive there, and they are
  // reaped promptly where no slow PID 1 holds them.
  if (!hasProc) return true
  return groupMembers(pgid).length > 0
}

const hasProc = existsSync('/proc/self/stat')
