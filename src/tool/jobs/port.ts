/**
 * The jobs port: who owns a background job and what it is called. The bash tool starts a
 * process through the shell executor (the seed's ShellProcess handle, which has no id and no
 * owner) and hands it to a Jobs runtime, which gives it an id, keeps it per owner, and serves
 * `job_output` and `job_kill`. A harness with its own job runtime implements this interface;
 * without one, cordon's InMemoryJobs is used. Every method may answer with a promise, so a
 * remote runtime fits.
 */
import type { ShellProcess, ShellProcessRead, ShellProcessStatus, ShellSandboxInfo } from '../../shell/types.js'

/** Who a job belongs to: the session and agent of the call that started it. Only its owner can read or kill it. */
export interface JobOwner {
  sessionId?: string | undefined
  agent?: string | undefined
}

/** What the bash tool hands the runtime when a background call has started its process. */
export interface JobStart {
  /** The seed's handle: the only access to the process (reads, kill, done). */
  process: ShellProcess
  command: string
  workdir: string
  owner: JobOwner
  /** The call that started it. */
  callId: string
}

/** One job as its runtime knows it. */
export interface JobInfo {
  id: string
  command: string
  workdir: string
  owner: JobOwner
  callId: string
  status: ShellProcessStatus
  exitCode: number | null
  signal: NodeJS.Signals | null
  /** Sandbox facts, stamped when a confined job settles. */
  sandbox?: ShellSandboxInfo | undefined
}

/** A consuming read of one job, with its state after the read. */
export interface JobOutput {
  job: JobInfo
  read: ShellProcessRead
}

/** What `kill` did: whether the job was still running, its settled state, and the output not yet read. */
export interface JobKill {
  job: JobInfo
  /** False when the job had already ended (nothing was killed). */
  killed: boolean
  read: ShellProcessRead
}

/** How long `output` may wait for the job to end before reading. */
export interface JobOutputOptions {
  /** Wait up to this many ms for the job to settle (0 or absent: read at once). */
  waitMs?: number | undefined
  /** Ends the wait early (the read still happens). */
  signal?: AbortSignal | undefined
}

/** The port: ids, ownership and lifecycle of background jobs. */
export interface Jobs {
  /** Registers a started process under a new id owned by `start.owner`. */
  start(start: JobStart): JobInfo | Promise<JobInfo>
  /** The owner's job `id`, read (consuming); `undefined` when the owner has no such job. */
  output(
    id: string,
    owner: JobOwner,
    options?: JobOutputOptions,
  ): JobOutput | undefined | Promise<JobOutput | undefined>
  /** Kills the owner's job `id` (its whole tree) and resolves once it settled; `undefined` when there is none. */
  kill(id: string, owner: JobOwner): Promise<JobKill | undefined>
  /** The owner's jobs, oldest first. */
  list(owner: JobOwner): JobInfo[] | Promise<JobInfo[]>
}

/** A stable key for an owner (two calls of one session and agent get the same key). */
export function ownerKey(owner: JobOwner): string {
  return JSON.stringify([owner.sessionId ?? null, owner.agent ?? null])
}
