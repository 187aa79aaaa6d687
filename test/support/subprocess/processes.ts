// Helpers for tests that watch real processes: liveness read from /proc (PID 1 here reaps
// orphans late, so a zombie counts as gone), and bounded waits.
import { readdirSync, readFileSync } from 'node:fs'

/** Whether `pid` is a running (non-zombie) process. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** Polls until `predicate` holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(predicate: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (predicate()) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return predicate()
}

/** Pids printed one per line (or space-separated) by a command. */
export function pidsIn(text: string): number[] {
  return text
    .split(/\s+/)
    .filter((t) => /^\d+$/.test(t))
    .map(Number)
}

/** The live processes whose initial environment holds `entry` (`NAME=value`): a command's marked descendants, in the host's pids. */
export function processesMarked(entry: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry) && alive(pid)) found.push(pid)
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found
}

/** Every live descendant of `root` (by parent pid, as /proc shows them now). */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)])
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = []
  const queue = [root]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child)
      queue.push(child)
    }
  }
  return out.filter(alive)
}
