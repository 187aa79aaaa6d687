/**
 * What an approval says a retry follows: per owner (session and agent), the last sandbox failure
 * its bash calls met (a denial with its paths, or a runner failure), and how many calls came
 * since. Memory only, bounded: the least recently active owners are forgotten first.
 */
import type { NetworkFacts } from '../policy/network/facts.js'
import type { SandboxMode } from '../policy/vocabulary.js'
import type { PrecedingFailure } from './approval.js'
import { ownerKey, type JobOwner } from './jobs/port.js'

/** One failure as recorded (what PrecedingFailure says, minus what depends on the retry). */
export type SandboxFailure = Omit<PrecedingFailure, 'sameCommand' | 'callsSince'>

interface OwnerRecord {
  failure: SandboxFailure | undefined
  callsSince: number
}

/** Remembers each owner's last sandbox failure for the approval of a later retry. */
export class SandboxFailureMemory {
  readonly #owners = new Map<string, OwnerRecord>()
  readonly #maxOwners: number

  constructor(maxOwners = 1024) {
    this.#maxOwners = maxOwners
  }

  /** Counts one finished bash call of `owner` that met no sandbox failure. */
  noteCall(owner: JobOwner): void {
    const record = this.#touch(owner)
    record.callsSince += 1
  }

  /** Records `failure` as `owner`'s latest; a background job's failure seen again is not counted twice. */
  record(owner: JobOwner, failure: SandboxFailure): void {
    const record = this.#touch(owner)
    if (failure.jobId !== undefined && record.failure?.jobId === failure.jobId) return
    record.failure = failure
    record.callsSince = 0
  }

  /** The failure a retry of `command` by `owner` follows, or `undefined` when there was none. */
  precedingFailure(owner: JobOwner, command: string): PrecedingFailure | undefined {
    const record = this.#owners.get(ownerKey(owner))
    if (record?.failure === undefined) return undefined
    return { ...record.failure, sameCommand: record.failure.command === command, callsSince: record.callsSince }
  }

  #touch(owner: JobOwner): OwnerRecord {
    const key = ownerKey(owner)
    const record = this.#owners.get(key) ?? { failure: undefined, callsSince: 0 }
    this.#owners.delete(key) // re-inserted last: the map's order is the activity order
    this.#owners.set(key, record)
    if (this.#owners.size > this.#maxOwners) this.#owners.delete(this.#owners.keys().next().value as string)
    return record
  }
}

/** The failure a finished run's sandbox facts show, if any (a denial; a runner failure of a background job). */
export function failureOf(
  facts:
    | {
        mode: SandboxMode
        denied: boolean
        runnerFailed?: boolean | undefined
        deniedPaths?: readonly string[] | undefined
        deniedFor?: ReadonlyArray<'files' | 'network'> | undefined
        network?: NetworkFacts | undefined
      }
    | undefined,
  call: { callId: string; command: string; workdir: string; jobId?: string | undefined },
): SandboxFailure | undefined {
  if (facts === undefined) return undefined
  const base = {
    callId: call.callId,
    command: call.command,
    workdir: call.workdir,
    mode: facts.mode,
    jobId: call.jobId,
  }
  if (facts.runnerFailed === true) return { ...base, kind: 'runner-failed', paths: [] }
  if (!facts.denied) return undefined
  const refused = facts.deniedFor?.includes('network') ? (facts.network?.refused ?? []) : []
  return {
    ...base,
    kind: 'denied',
    paths: [...(facts.deniedPaths ?? [])],
    ...(refused.length > 0 ? { refused: refused.map((r) => ({ ...r })) } : {}),
  }
}
