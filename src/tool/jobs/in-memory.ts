/**
 * The jobs runtime cordon ships: ids `job-1`, `job-2`, … per instance, jobs kept in memory per
 * owner, settled ones dropped oldest first beyond a cap. The processes themselves belong to the
 * executor's subprocess runtime; `dispose()` kills the jobs still running.
 */
import type { ShellProcess } from '../../shell/types.js'
import {
  ownerKey,
  type JobInfo,
  type JobKill,
  type JobOutput,
  type JobOutputOptions,
  type JobOwner,
  type Jobs,
  type JobStart,
} from './port.js'

/** Options of InMemoryJobs. */
export interface InMemoryJobsOptions {
  /** Settled jobs kept readable; the oldest beyond this are forgotten. Default 100. */
  maxSettled?: number | undefined
}

interface Entry extends Omit<JobStart, 'process'> {
  id: string
  process: ShellProcess
  key: string
}

function infoOf(entry: Entry): JobInfo {
  const p = entry.process
  const info: JobInfo = {
    id: entry.id,
    command: entry.command,
    workdir: entry.workdir,
    owner: { ...entry.owner },
    callId: entry.callId,
    status: p.status,
    exitCode: p.exitCode,
    signal: p.signal,
  }
  if (p.sandbox !== undefined) info.sandbox = p.sandbox
  return info
}

/** Resolves when `process` settled or `ms` passed or `signal` aborted, whichever is first. */
function settledWithin(process: ShellProcess, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (process.status !== 'running' || ms <= 0 || signal?.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
    process.done.then(done, done)
  })
}

/** Background jobs in this host's memory, one namespace of ids per instance. */
export class InMemoryJobs implements Jobs {
  readonly #maxSettled: number
  readonly #entries = new Map<string, Entry>()
  #next = 1

  constructor(options: InMemoryJobsOptions = {}) {
    this.#maxSettled = options.maxSettled ?? 100
  }

  /** Registers the started process as the next `job-N`, owned by `start.owner`. */
  start(start: JobStart): JobInfo {
    const entry: Entry = { ...start, owner: { ...start.owner }, id: `job-${this.#next++}`, key: ownerKey(start.owner) }
    this.#entries.set(entry.id, entry)
    const forget = () => this.#forgetOldSettled()
    start.process.done.then(forget, forget) // a foreign handle's done might reject; ours never does
    return infoOf(entry)
  }

  /** Reads the owner's job (consuming), after waiting up to `options.waitMs` for it to settle. */
  async output(id: string, owner: JobOwner, options: JobOutputOptions = {}): Promise<JobOutput | undefined> {
    const entry = this.#find(id, owner)
    if (entry === undefined) return undefined
    await settledWithin(entry.process, options.waitMs ?? 0, options.signal)
    const read = entry.process.readOutput()
    return { job: infoOf(entry), read }
  }

  /** Kills the owner's job and waits until it settled (TERM, then KILL after the executor's grace). */
  async kill(id: string, owner: JobOwner): Promise<JobKill | undefined> {
    const entry = this.#find(id, owner)
    if (entry === undefined) return undefined
    const wasRunning = entry.process.status === 'running'
    entry.process.kill()
    await entry.process.done
    return { job: infoOf(entry), killed: wasRunning, read: entry.process.readOutput() }
  }

  /** The owner's jobs, oldest first. */
  list(owner: JobOwner): JobInfo[] {
    const key = ownerKey(owner)
    return [...this.#entries.values()].filter((e) => e.key === key).map(infoOf)
  }

  /** Kills every job still running and waits until each settled; settled jobs stay readable. */
  async dispose(): Promise<void> {
    const running = [...this.#entries.values()].filter((e) => e.process.status === 'running')
    for (const e of running) e.process.kill()
    await Promise.all(running.map((e) => e.process.done))
  }

  #find(id: string, owner: JobOwner): Entry | undefined {
    const entry = this.#entries.get(id)
    // Another owner's job is reported as absent: ids say nothing across sessions.
    return entry !== undefined && entry.key === ownerKey(owner) ? entry : undefined
  }

  #forgetOldSettled(): void {
    const settled = [...this.#entries.values()].filter((e) => e.process.status !== 'running')
    for (const e of settled.slice(0, Math.max(0, settled.length - this.#maxSettled))) this.#entries.delete(e.id)
  }
}
