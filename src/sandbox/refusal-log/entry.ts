/**
 * One entry of a sandbox's refusal log: a run that met at least one refusal, and each refusal its
 * facts report (a path the sandbox refused, a host the network proxy refused, a class of
 * operations the backend closes whole). The operation is named where the source of the fact
 * knows it (a refused write, a refused connection), else `unknown`.
 */
import type { NetworkFacts, NetworkRefusalReason } from '../../policy/network/facts.js'
import type { ClosedClassFact, SandboxMode } from '../../policy/vocabulary.js'

/** The most refusals one entry itemizes; the rest are counted in `refusalsOmitted`. */
export const REFUSALS_PER_ENTRY = 32
/** The longest command an entry keeps, in characters (a longer one is cut, with an ellipsis). */
export const LOGGED_COMMAND_CHARS = 2000

/** A path the sandbox refused: a write (the run's messages or the kernel said so), or not known which operation. */
export interface PathRefusal {
  kind: 'path'
  path: string
  operation: 'write' | 'unknown'
}

/** A destination the network allow-list's proxy refused, how often and why. */
export interface HostRefusal {
  kind: 'host'
  host: string
  port: number
  operation: 'connect'
  reason: NetworkRefusalReason
  count: number
}

/** A class of operations the backend refuses whole (shared memory, terminals, unix sockets), as the run met it. */
export interface ClassRefusal {
  kind: 'class'
  class: string
  operation: 'unknown'
  /** What the run met, in a person's words. */
  evidence: string
  /** The flags that open the class. */
  remedy: string
}

/** One refusal a run met. */
export type LoggedRefusal = PathRefusal | HostRefusal | ClassRefusal

/** One run that met refusals. */
export interface RefusalLogEntry {
  /** The run's number in this sandbox (1 for the first run it noted, whether refused or not). */
  run: number
  /** When the run settled (ISO 8601, UTC). */
  time: string
  /** The command (cut at LOGGED_COMMAND_CHARS characters). */
  command: string
  workdir: string
  mode: SandboxMode
  backend?: string | undefined
  /** Whether the run was a background job. */
  background: boolean
  /** The session, agent and tool call the run served, when a harness said so. */
  sessionId?: string | undefined
  agent?: string | undefined
  callId?: string | undefined
  /** Whether the run failed with these refusals (`denied` in its facts), or went on without what was refused. */
  failed: boolean
  refusals: LoggedRefusal[]
  /** Refusals past REFUSALS_PER_ENTRY, counted (network refusals the proxy itself did not itemize included). */
  refusalsOmitted?: number
}

/** What a run's facts say of its refusals (the fields of the shell seam's ShellSandboxInfo this reads). */
export interface RunRefusalFacts {
  mode: SandboxMode
  denied: boolean
  backend?: string | undefined
  deniedPaths?: readonly string[] | undefined
  refusedPaths?: readonly string[] | undefined
  network?: NetworkFacts | undefined
  closedClasses?: readonly ClosedClassFact[] | undefined
}

/** Each refusal the facts report, writes first, in the order the facts list them; paths once each. */
export function refusalsOf(facts: RunRefusalFacts): { refusals: LoggedRefusal[]; omitted: number } {
  const writes = new Set(facts.refusedPaths ?? [])
  const all: LoggedRefusal[] = [...writes].map((path) => ({ kind: 'path', path, operation: 'write' }))
  for (const path of new Set(facts.deniedPaths ?? []))
    if (!writes.has(path)) all.push({ kind: 'path', path, operation: 'unknown' })
  for (const r of facts.network?.refused ?? [])
    all.push({ kind: 'host', host: r.host, port: r.port, operation: 'connect', reason: r.reason, count: r.count })
  for (const c of facts.closedClasses ?? [])
    all.push({ kind: 'class', class: c.class, operation: 'unknown', evidence: c.evidence, remedy: c.remedy })
  const unlisted = facts.network?.refusedOmitted ?? 0
  return {
    refusals: all.slice(0, REFUSALS_PER_ENTRY),
    omitted: Math.max(0, all.length - REFUSALS_PER_ENTRY) + unlisted,
  }
}

/** `command` cut to LOGGED_COMMAND_CHARS characters (an ellipsis marks the cut). */
export function loggedCommand(command: string): string {
  return command.length <= LOGGED_COMMAND_CHARS ? command : `${command.slice(0, LOGGED_COMMAND_CHARS - 1)}…`
}
