/**
 * A sandbox's bounded log of its runs' refusals, so a harness can tell a model what was refused
 * across commands (not only in the last result). Every run is numbered as it is noted; only runs
 * that met a refusal are kept, the newest MAX_LOGGED_RUNS of them, the older ones counted.
 */
import type { SandboxMode } from '../../policy/vocabulary.js'
import { loggedCommand, type RefusalLogEntry, type RunRefusalFacts, refusalsOf } from './entry.js'

/** The most runs the log keeps (the oldest go first). */
export const MAX_LOGGED_RUNS = 256

/** One settled run as the executor notes it. */
export interface NotedRun {
  command: string
  workdir: string
  background: boolean
  sessionId?: string | undefined
  agent?: string | undefined
  callId?: string | undefined
  /** The run's sandbox facts; absent for a run nothing confined. */
  facts: RunRefusalFacts | undefined
}

/** Which entries a query returns: those of one owner (when given), after a run number, the newest `limit`. */
export interface RefusalLogQuery {
  /** Only this session's runs (an absent session matches only runs without one, when `owner` is given). */
  owner?: { sessionId?: string | undefined; agent?: string | undefined } | undefined
  /** Only runs numbered above this one. */
  afterRun?: number | undefined
  /** At most this many entries, the newest kept (default: all the log holds). */
  limit?: number | undefined
}

/** What a query found: its entries (oldest first), and how many runs with refusals the log no longer holds. */
export interface RefusalLogRead {
  entries: RefusalLogEntry[]
  /** Runs with refusals dropped from the log as it filled (of every owner). */
  dropped: number
  /** The number of the last run noted (0 before any). */
  lastRun: number
}

/** The refusal log of one sandbox. */
export class RefusalLog {
  private readonly entries: RefusalLogEntry[] = []
  private runs = 0
  private dropped = 0

  /** Numbers a settled run and keeps it when its facts report a refusal; returns the entry kept, if any. */
  note(run: NotedRun, now: Date = new Date()): RefusalLogEntry | undefined {
    this.runs += 1
    const facts = run.facts
    if (facts === undefined || facts.mode === ('danger-full-access' satisfies SandboxMode)) return undefined
    const { refusals, omitted } = refusalsOf(facts)
    if (refusals.length === 0 && omitted === 0) return undefined
    const entry: RefusalLogEntry = {
      run: this.runs,
      time: now.toISOString(),
      command: loggedCommand(run.command),
      workdir: run.workdir,
      mode: facts.mode,
      backend: facts.backend,
      background: run.background,
      sessionId: run.sessionId,
      agent: run.agent,
      callId: run.callId,
      failed: facts.denied,
      refusals,
      ...(omitted > 0 ? { refusalsOmitted: omitted } : {}),
    }
    this.entries.push(entry)
    if (this.entries.length > MAX_LOGGED_RUNS) {
      this.entries.shift()
      this.dropped += 1
    }
    return entry
  }

  /** The entries `query` selects, oldest first (copies: the log itself cannot be changed through them). */
  read(query: RefusalLogQuery = {}): RefusalLogRead {
    const owner = query.owner
    const after = query.afterRun ?? 0
    let entries = this.entries.filter(
      (e) => e.run > after && (owner === undefined || (e.sessionId === owner.sessionId && e.agent === owner.agent)),
    )
    if (query.limit !== undefined) entries = query.limit <= 0 ? [] : entries.slice(-query.limit)
    return { entries: structuredClone(entries), dropped: this.dropped, lastRun: this.runs }
  }
}
