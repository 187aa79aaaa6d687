/**
 * What an escape attack is (data: a shell script, the modes it runs under, how its unconfined
 * control runs) and the helpers the attack lists share.
 *
 * A script prints BREACH when an operation it should have been refused succeeded. Variables:
 * ROOT (workspace root), OUT (a writable-by-DAC dir outside the grant), BASE (their parent), TAG
 * (unique name part), HOSTPID (the runner), HELPER (an unconfined sleeping process, cwd OUT),
 * TCPPORT/UDPPORT (host listeners on 127.0.0.1), ABSTRACT (a host abstract socket name), PY
 * (python3), and the host objects of host-fixtures.py: SHMID, SEMID, MSGID (SysV objects holding
 * a secret), SYSVKEY (a free SysV key), MQNAME (a POSIX message queue), SKEY/UKEY (keys in the
 * session and user keyrings), KEYDESC, PTS (a session-less pty with typed input waiting),
 * HOSTFIFO (a FIFO with a host reader), HOSTSOCK (a listening unix socket). Every secret the host
 * objects hold contains `cordon-secret`.
 */
import type { ResourceLimits } from '../../../src/policy/vocabulary.js'

/** The confined modes an attack runs under. */
export type AttackMode = 'read-only' | 'workspace-write'

/** Who runs an attack: root, or uid 65534 (through setpriv). */
export type AttackUser = 'root' | 'nobody'

/** The class of issue 10 (or of the file rules) an attack belongs to, for the report matrix. */
export type AttackClass =
  | 'files'
  | 'metadata'
  | 'processes'
  | 'ipc'
  | 'keyrings'
  | 'terminals'
  | 'inode ioctls'
  | 'leases'
  | 'network'
  | 'kernel'
  | 'descriptors'
  | 'resources'

/** How an attack's unconfined control runs, and where it cannot succeed. */
export interface AttackControl {
  /**
   * Users for whom the operation is impossible on this host even unconfined, with the reason.
   * The control then proves that it fails (a stale reason fails the test).
   */
  impossible?: Partial<Record<AttackUser, string>>
  /**
   * An argv prefix that keeps the control's effect off the host (a private mount namespace):
   * the operation and its permission checks are the same.
   */
  wrap?: readonly string[]
  /** The control is handed one more descriptor, fd 3 (a host file open for writing): the attack looks for leaked ones. */
  leakFd?: boolean
}

/** One attack. */
export interface Attack {
  name: string
  kind: AttackClass
  modes: readonly AttackMode[]
  /** Run with `network: 'deny'`. */
  network?: 'deny'
  /** The policy's resource limits for the run. */
  limits?: ResourceLimits
  script: string
  /**
   * Backends that govern this class with a private namespace rather than by refusing the call:
   * the operation succeeds, but only inside the sandbox's own namespace, so a printed BREACH is
   * not evidence there (what changed outside, what reached the host listeners, objects and the
   * helper are still checked). The value must appear in that backend's listed limitations or in
   * the run's own enforcement account; where the account does not say it (e.g. no namespace for
   * this user), BREACH is checked as for any attack.
   */
  privateNamespace?: Readonly<Record<string, string>>
  /**
   * Users for whom the run's account must say the class is NOT governed (with this text): the
   * operation may succeed, and the run is `partial` for it. Everything outside is still checked.
   */
  ungovernedFor?: Partial<Record<AttackUser, { class: string; how: string; backend?: string; mode?: AttackMode }>>
  control?: AttackControl
}

/** Both confined modes. */
export const BOTH: readonly AttackMode[] = ['read-only', 'workspace-write']
/** read-only only (the operation is granted in workspace-write). */
export const RO: readonly AttackMode[] = ['read-only']

/** `"$PY" -c '<code>' args…` (the code must not contain a single quote). */
export const py = (code: string, ...args: string[]) => {
  if (code.includes("'")) throw new Error(`py(): single quote in ${code}`)
  return `"$PY" -c '${code}' ${args.join(' ')}`
}

/** Python prelude: libc through ctypes with errno, and `sc(nr, *args) -> (result, errno)`. */
export const PY_SYSCALL =
  'import ctypes,os,sys,struct\nlibc=ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype=ctypes.c_long\ndef sc(n, *a):\n  ctypes.set_errno(0); r=libc.syscall(n, *a); return r, ctypes.get_errno()\n'

/** A private network namespace (bwrap's `--unshare-net`, the Landlock supervisor's own): sockets are created and bound, inside a namespace holding only loopback. */
export const PRIVATE_NET = {
  bubblewrap: 'sockets can be created and bound inside it',
  landlock: 'sockets can be created and bound inside it',
} as const

/** A private IPC namespace: SysV objects and message queues are created, inside it only. */
export const PRIVATE_IPC = {
  bubblewrap: 'a private IPC namespace',
  landlock: 'a private IPC namespace',
} as const

/** uid 65534 holds no capability: what needs one is impossible for it even unconfined. */
export const NOBODY_LACKS = (cap: string) => ({ nobody: `uid 65534 holds no ${cap} (unconfined too)` })
