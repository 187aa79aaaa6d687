/**
 * What known tools print when a class is refused them, by class: Python's multiprocessing and
 * shared_memory, sem_open and shm_open; Python's pty and os.openpty, util-linux `script`, tmux,
 * openpty and its kin; socket() and connect() refused with EPERM (Python, Node, socat, nc, ssh).
 * A message counts only where the plan closes its class (src/sandbox/closed-classes/met.ts): the
 * same words under a plan that leaves the class open are the command's own business.
 */
import type { ClosedClass } from './closing-plan.js'

/** One way a tool says it met a class: every pattern must match the output (a traceback spreads over lines). */
export interface ClassMessage {
  all: readonly RegExp[]
  /** What the run met, in a person's words. */
  says: string
}

/** A refusal as Landlock (EACCES) or a read-only view of the host (EROFS) words it. */
const DENIED = /(?:permission denied|EACCES|\[Errno 13\]|read-only file system|EROFS|\[Errno 30\])/i

/** The messages of each class, most specific first. */
export const CLASS_MESSAGES: Readonly<Record<ClosedClass, readonly ClassMessage[]>> = {
  'shared-memory': [
    { all: [/\bSemLock\b/, DENIED], says: "Python multiprocessing's semaphore (sem_open in /dev/shm) was refused" },
    {
      all: [/\bSharedMemory\b/, /(?:Permission denied|Read-only file system): '\/psm_/],
      says: "Python's shared_memory (shm_open) was refused",
    },
    {
      all: [/\b(?:sem|shm)_open\b[^\n]*(?:permission denied|EACCES|read-only file system|EROFS)/i],
      says: 'sem_open or shm_open was refused',
    },
    {
      all: [
        /\/dev\/shm\b[^\n]*(?:permission denied|EACCES|read-only file system|EROFS)|(?:permission denied|EACCES|read-only file system|EROFS)[^\n]*\/dev\/shm\b/i,
      ],
      says: 'a file in /dev/shm was refused',
    },
  ],
  terminals: [
    { all: [/out of pty devices/i], says: "Python's pty could not open a pseudo-terminal" },
    { all: [/failed to create pseudo-terminal/i], says: '`script` could not create a pseudo-terminal' },
    {
      all: [/create window failed: fork failed: permission denied/i],
      says: 'tmux could not open a pty for its window',
    },
    { all: [/\bos\.openpty\(|\bopenpty\(\)/, DENIED], says: 'openpty was refused' },
    {
      all: [/\b(?:openpty|forkpty|posix_openpt|grantpt|unlockpt|\/dev\/ptmx)\b[^\n]*(?:permission denied|EACCES)/i],
      says: 'opening a pseudo-terminal was refused',
    },
  ],
  'unix-sockets': socketMessages('a unix socket'),
  sockets: socketMessages('a socket'),
}

/** socket()/connect()/bind()/listen() refused with EPERM, as Python, Node, socat, nc and ssh say it. */
function socketMessages(what: string): ClassMessage[] {
  return [
    { all: [/\bsocket\.py"/, /PermissionError: \[Errno 1\]/], says: `Python's socket() for ${what} was refused` },
    { all: [/\b(?:connect|listen|bind) EPERM\b/], says: `Node's connect or listen on ${what} was refused` },
    { all: [/\bsocket\(\d+, \d+, \d+\): operation not permitted/i], says: `socat's socket() was refused` },
    {
      all: [/\b(?:socket|connect(?:ing)?(?: to agent)?|bind)\b[^\n]*operation not permitted/i],
      says: `socket() or connect() on ${what} was refused`,
    },
  ]
}

/** What the output shows of `closed`, or undefined when it shows nothing. */
export function messageOf(closed: ClosedClass, output: string): string | undefined {
  for (const m of CLASS_MESSAGES[closed]) if (m.all.every((re) => re.test(output))) return m.says
  return undefined
}
