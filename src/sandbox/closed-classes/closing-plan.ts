/**
 * The classes of operations a plan closes whole, read from the plan itself (what the run really
 * got, not a backend's name): no /dev/shm of its own (Landlock closes /dev; bubblewrap binds the
 * session's own dir there), no /dev/pts of its own (Landlock cannot grant the host's without
 * reopening every other terminal), and under a cut network a seccomp program that refuses
 * socket(AF_UNIX) — every socket() when no private network namespace holds the rest. Seatbelt's
 * plans carry no seccomp program: none is claimed for them.
 */
import { CLOSED_CLASS_REMEDIES } from '../../policy/remedies.js'
import { allowListOf, type NetworkPolicy } from '../../policy/vocabulary.js'

/** A class a backend can close whole. */
export type ClosedClass = 'shared-memory' | 'terminals' | 'unix-sockets' | 'sockets'

/** What the closing facts are read from: every Linux plan (src/sandbox/confinement/plan.ts) has them. */
export interface ClosingPlan {
  backend: string
  policy: { network?: NetworkPolicy | undefined }
  /** The seccomp input: the cut network, a private network namespace, a private /dev/pts. */
  seccomp?: { input: { network: 'inherit' | 'deny'; privateNet: boolean; privateDevpts?: boolean | undefined } }
  /** bubblewrap's mounts: the session's dir bound at /dev/shm. */
  mounts?: { shm?: string | undefined } | undefined
}

/** One class a plan closes, why in a person's words, and the flags that open it. */
export interface Closing {
  class: ClosedClass
  why: string
  remedy: string
}

/** The classes `plan` closes whole (none for a plan without a seccomp program: Seatbelt's). */
export function closedBy(plan: ClosingPlan): Closing[] {
  const input = plan.seccomp?.input
  if (input === undefined) return []
  const out: Closing[] = []
  if (plan.mounts?.shm === undefined)
    out.push({
      class: 'shared-memory',
      why: `/dev/shm is closed under ${plan.backend} (the host's is shared, and no private one is mounted)`,
      remedy: CLOSED_CLASS_REMEDIES['shared-memory'],
    })
  if (input.privateDevpts !== true)
    out.push({
      class: 'terminals',
      why: `new ptys cannot be opened under ${plan.backend} (/dev/ptmx and /dev/pts are closed)`,
      remedy: CLOSED_CLASS_REMEDIES.terminals,
    })
  if (input.network === 'deny') {
    const remedy = allowListOf(plan.policy.network)
      ? CLOSED_CLASS_REMEDIES.allowList
      : CLOSED_CLASS_REMEDIES[input.privateNet ? 'unix-sockets' : 'sockets']
    out.push(
      input.privateNet
        ? { class: 'unix-sockets', why: 'the cut network refuses socket(AF_UNIX), a socket in the root too', remedy }
        : {
            class: 'sockets',
            why: 'the cut network refuses every socket() (no private network namespace here)',
            remedy,
          },
    )
  }
  return out
}
