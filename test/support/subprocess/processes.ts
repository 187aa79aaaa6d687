// Helpers for tests that watch real processes: liveness read from /proc (PID 1 here reaps
// orphans late, so a zombie counts as gone), and bounded waits.
import { readFileSync } from 'node:fs'

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
