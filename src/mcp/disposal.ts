/**
 * What one MCP connection leaves running, and how it goes when the client does: the tools/call
 * requests in flight (the SDK aborts their signals when the transport closes, which terminates a
 * foreground command), the background jobs the connection's calls started (killed through the
 * jobs port, by owner, so a harness's own port is honoured), then what the server was given to
 * dispose (its sandbox: its session dirs go). Nothing of the connection survives it.
 */
import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import type { JobOwner, Jobs } from '../tool/jobs/port.js'
import type { McpDisposable } from './options.js'

/** One tools/call while it runs. */
interface InFlight {
  requestId: RequestId
  done: Promise<unknown>
}

/** The tools/call requests a connection is running, by call id. */
export class CallsInFlight {
  readonly #calls = new Map<string, InFlight>()

  /**
   * Runs `body` as call `callId` (registered before it starts: its approval asks for the request
   * id at once); undefined, and nothing run, when a call with that id is already running.
   */
  run<T>(callId: string, requestId: RequestId, body: () => Promise<T>): Promise<T> | undefined {
    if (this.#calls.has(callId)) return undefined
    const entry: InFlight = { requestId, done: Promise.resolve() }
    this.#calls.set(callId, entry)
    const done = (async () => {
      try {
        return await body()
      } finally {
        if (this.#calls.get(callId) === entry) this.#calls.delete(callId)
      }
    })()
    entry.done = done
    return done
  }

  /** The JSON-RPC id of call `callId` while it runs. */
  requestIdOf(callId: string): RequestId | undefined {
    return this.#calls.get(callId)?.requestId
  }

  /** Resolves once every call running now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#calls.values()].map((c) => c.done))
  }
}

/** Kills every running job of `owner` and waits until each settled; the failures, if any. */
export async function killJobsOf(jobs: Jobs, owner: JobOwner): Promise<unknown[]> {
  const failures: unknown[] = []
  let listed: Awaited<ReturnType<Jobs['list']>>
  try {
    listed = await jobs.list(owner)
  } catch (error) {
    return [error]
  }
  const running = listed.filter((job) => job.status === 'running')
  const kills = await Promise.allSettled(running.map((job) => jobs.kill(job.id, owner)))
  for (const k of kills) if (k.status === 'rejected') failures.push(k.reason)
  return failures
}

/** Calls `what`'s dispose (or `what` itself) and waits for it. */
async function disposeOf(what: McpDisposable): Promise<void> {
  await (typeof what === 'function' ? what() : what.dispose())
}

/** What a connection's disposal needs. */
export interface ConnectionParts {
  calls: CallsInFlight
  jobs: Jobs
  owner: JobOwner
  dispose?: McpDisposable | undefined
}

/**
 * Ends everything of a closed connection: its jobs are killed while its aborted calls end, then
 * the jobs a call started on its way out, then `dispose`. Resolves with every failure (never throws).
 */
export async function disposeConnection(parts: ConnectionParts): Promise<unknown[]> {
  const [killed] = await Promise.all([killJobsOf(parts.jobs, parts.owner), parts.calls.settled()])
  // A bash call that was starting a job when the client went has registered it by now.
  const failures = [...killed, ...(await killJobsOf(parts.jobs, parts.owner))]
  if (parts.dispose !== undefined) {
    try {
      await disposeOf(parts.dispose)
    } catch (error) {
      failures.push(error)
    }
  }
  return failures
}
