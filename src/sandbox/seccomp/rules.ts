/**
 * Which seccomp rules a confined command gets, by effect class (each rule's why is beside it;
 * the account of each backend says what stays open). Pure: a plan's facts in, rules and the encoded
 * program out, memoised per distinct input.
 *
 * - always: set-id modes. A chmod-family call whose mode has S_ISUID or S_ISGID, and an
 *   open/openat/creat/mkdir/mkdirat/mknod/mknodat that makes a file with them (open and openat only
 *   with O_CREAT or O_TMPFILE in the flags), are refused: a setuid binary a run leaves behind is a
 *   root escalation on a root host (bubblewrap's nosuid mounts end with the run; Landlock does not
 *   govern modes, outside the roots included). `chmod 755` and `+x` pass; a numeric chmod changing
 *   a directory that inherited S_ISGID fails (coreutils passes the bit on). `openat2` carries its
 *   mode in a struct seccomp cannot read: it stays allowed, and the empty file it makes loses both
 *   bits on the first write, truncate or fallocate, the command holding no CAP_FSETID. File capabilities (`security.capability`) need CAP_SETFCAP, which no
 *   confined command holds, so the xattr calls stay as they are.
 * - always: io_uring (its operations bypass the filter); keyrings (`add_key`, `request_key`,
 *   `keyctl`: the host's session keyring is inherited otherwise); terminal injection and takeover
 *   (`TIOCSTI`, `TIOCSCTTY` — but with a /dev/pts of its own, `TIOCLINUX`); leases (`F_SETLEASE` would stall the host's writers);
 *   `AF_VSOCK` (no network namespace isolates it).
 * - processes, without a private pid namespace: resource and scheduling control of other
 *   processes (Landlock's signal scope does not cover them) is allowed only on oneself: `pid == 0`
 *   for prlimit64 and sched_*, `who == 0` with a process or group `which` for setpriority and
 *   ioprio_set. Per-thread calls (a tid) are refused with EPERM too.
 * - ipc, without a private IPC namespace: SysV shared memory, semaphores, message queues and
 *   POSIX message queues are refused (they reach the host's namespace, not the file system).
 * - read-only: the metadata family (mode, owner, times, xattrs), unless the mounts refuse it
 *   outside the writable set (`metadataByMounts`: a read-only view of the host, where chmod, utime
 *   and the rest fail EROFS but in the command's own TMPDIR), and every inode-changing
 *   filesystem ioctl (families 'f', 'v', 'X', 'r', 'o', 0x94, 0x97, 0xf5 that write or carry no
 *   direction), minus the queries and clones listed in INODE_IOCTL_ALLOWED.
 * - file-notification watches, where the hidden places are closed by Landlock alone (`read-only`
 *   on Landlock): `inotify_add_watch`, `fanotify_mark` and dnotify (`fcntl(F_NOTIFY)`: a hidden
 *   dir opens, READ_DIR being granted everywhere) are refused. Landlock has no hook for
 *   watches: a command could watch a hidden directory and read the names of what the host opens
 *   or makes there, and when (bubblewrap's masks leave it nothing to watch).
 * - network: deny: with a private network namespace only AF_INET, AF_INET6 and AF_NETLINK sockets
 *   (loopback inside it); without one, no socket() at all. `socketpair` stays for AF_UNIX, and
 *   inherited sockets keep working; unix sockets inside the roots fail too (their paths cannot
 *   be told from a host service's).
 */
import {
  type ArgCheck,
  type BitCheck,
  compileSeccompRules,
  encodeBpf,
  type SeccompArch,
  type SeccompRules,
  type SyscallName,
  type SyscallRule,
} from './bpf.js'

/** What a plan asks of its seccomp program. */
export interface SeccompInput {
  arch: SeccompArch
  mode: 'read-only' | 'workspace-write'
  network: 'inherit' | 'deny'
  /** An IPC namespace of its own: SysV and mqueue reach only it. */
  privateIpc: boolean
  /** A network namespace of its own (deny only): sockets reach only its loopback. */
  privateNet: boolean
  /**
   * A /dev/pts of its own (bubblewrap): no host terminal is reachable by path and none is
   * inherited, so taking a controlling tty (TIOCSCTTY, as tmux, script and expect do on their
   * own ptys) is allowed; injection (TIOCSTI) and console control stay refused.
   */
  privateDevpts?: boolean
  /** Refuse file-notification watches (the hidden places are closed only by Landlock, which does not govern watches). */
  refuseWatches?: boolean
  /**
   * The run sees the host through read-only mounts but for its writable set (bubblewrap's binds, a
   * Landlock run's own mount namespace): metadata outside that set fails EROFS, so under
   * `read-only` the metadata family is left to the mounts (only set-id modes refused), and
   * unpacking or copying into TMPDIR keeps its modes and times.
   */
  metadataByMounts?: boolean
}

/** The metadata family refused under `read-only`: mode, owner, times, extended attributes. */
export const METADATA_SYSCALLS: readonly SyscallName[] = [
  'chmod',
  'fchmod',
  'fchmodat',
  'fchmodat2',
  'chown',
  'fchown',
  'lchown',
  'fchownat',
  'utime',
  'utimes',
  'futimesat',
  'utimensat',
  'setxattr',
  'lsetxattr',
  'fsetxattr',
  'setxattrat',
  'removexattr',
  'lremovexattr',
  'fremovexattr',
  'removexattrat',
  'file_setattr',
]

/** S_ISUID | S_ISGID: the mode bits that make a set-id file. */
export const SETID_BITS = 0o6000

/** O_CREAT and __O_TMPFILE (the same on x86_64 and aarch64): an open that makes a file, whose mode counts. */
export const O_CREATES = 0o100 | 0o20000000

/** Where each mode-setting or file-making call carries its mode, and its open flags where the mode counts only with O_CREATES. */
export const SETID_MODE_ARGS: Readonly<Partial<Record<SyscallName, { mode: number; flags?: number }>>> = {
  chmod: { mode: 1 },
  fchmod: { mode: 1 },
  fchmodat: { mode: 2 },
  fchmodat2: { mode: 2 },
  open: { flags: 1, mode: 2 },
  openat: { flags: 2, mode: 3 },
  creat: { mode: 1 },
  mkdir: { mode: 1 },
  mkdirat: { mode: 2 },
  mknod: { mode: 1 },
  mknodat: { mode: 2 },
}

/** The set-id rules; where the metadata family is refused whole (`refusedWhole`) the chmod family is skipped. */
function setidRules(refusedWhole: boolean): SyscallRule[] {
  const rules: SyscallRule[] = []
  for (const [name, at] of Object.entries(SETID_MODE_ARGS) as [SyscallName, { mode: number; flags?: number }][]) {
    if (refusedWhole && METADATA_SYSCALLS.includes(name)) continue
    const checks: BitCheck[] = at.flags === undefined ? [] : [{ arg: at.flags, anyOf: O_CREATES }]
    rules.push({ name, refuseWhenBits: [...checks, { arg: at.mode, anyOf: SETID_BITS }] })
  }
  return rules
}

/** The calls that set a file-notification watch by path (dnotify, through an fd, is `F_NOTIFY` below). */
export const WATCH_SYSCALLS: readonly SyscallName[] = ['inotify_add_watch', 'fanotify_mark']

/** io_uring is refused always: its operations bypass the syscall filter. */
export const IO_URING_SYSCALLS: readonly SyscallName[] = ['io_uring_setup', 'io_uring_enter', 'io_uring_register']

/** Kernel keyrings: the session keyring is inherited from the host otherwise. */
export const KEYRING_SYSCALLS: readonly SyscallName[] = ['add_key', 'request_key', 'keyctl']

/** SysV IPC and POSIX message queues: the host's IPC namespace unless the run has its own. */
export const IPC_SYSCALLS: readonly SyscallName[] = [
  'shmget',
  'shmat',
  'shmdt',
  'shmctl',
  'semget',
  'semop',
  'semtimedop',
  'semctl',
  'msgget',
  'msgsnd',
  'msgrcv',
  'msgctl',
  'mq_open',
  'mq_unlink',
  'mq_timedsend',
  'mq_timedreceive',
  'mq_notify',
  'mq_getsetattr',
]

/** Terminal ioctls refused in every confined run: injection, taking a controlling tty, console control. */
export const TERMINAL_IOCTLS = {
  TIOCSTI: 0x5412,
  TIOCSCTTY: 0x540e,
  TIOCLINUX: 0x541c,
} as const

/** Filesystem ioctl families (type byte), the one table of them. */
export const INODE_IOCTL_FAMILIES: Readonly<Record<string, number>> = {
  "'f' (generic FS_IOC_*, ext2/3/4, fscrypt, fsverity)": 0x66,
  "'v' (FS_IOC_SETVERSION, ext2 versions)": 0x76,
  "'X' (XFS, FS_IOC_FSSETXATTR, FIFREEZE/FITHAW/FITRIM)": 0x58,
  "'r' (FAT attributes)": 0x72,
  "'o' (OCFS2)": 0x6f,
  '0x94 (btrfs, FICLONE family)': 0x94,
  '0x97 (ceph)': 0x97,
  '0xf5 (f2fs)': 0xf5,
}

/** Queries and clones of those families that carry the write bit yet change no inode they did not open for writing. */
export const INODE_IOCTL_ALLOWED: Readonly<Record<string, number>> = {
  FS_IOC_FIEMAP: 0xc020660b,
  FS_IOC_GET_ENCRYPTION_POLICY_EX: 0xc0096616,
  FS_IOC_GET_ENCRYPTION_KEY_STATUS: 0xc080661a,
  FS_IOC_READ_VERITY_METADATA: 0xc0286687,
  FS_IOC_GETFSMAP: 0xc0c0583b,
  FICLONE: 0x40049409, // the destination fd must be open for writing (Landlock checked that open)
  FICLONERANGE: 0x4020940d,
}

/** F_SETLEASE: a lease on a readable host file stalls its writers. */
export const F_SETLEASE = 1024

/** fcntl's dnotify command: a directory watch through an fd (READ_DIR is granted everywhere, so a hidden dir opens). */
export const F_NOTIFY = 1026

/** Socket families named by the network rules. */
export const AF = { UNIX: 1, INET: 2, INET6: 10, NETLINK: 16, VSOCK: 40 } as const

const PRIO_PROCESS = 0
const PRIO_PGRP = 1
const IOPRIO_WHO_PROCESS = 1
const IOPRIO_WHO_PGRP = 2

const self = (arg: number): ArgCheck => ({ arg, oneOf: [0] })

/** The rules for one plan. */
export function seccompRulesFor(input: SeccompInput): SeccompRules {
  const rules: SyscallRule[] = []
  const refuse = (names: readonly SyscallName[]) => {
    for (const name of names) rules.push({ name, refuse: true })
  }
  refuse(IO_URING_SYSCALLS)
  refuse(KEYRING_SYSCALLS)
  if (!input.privateIpc) refuse(IPC_SYSCALLS)
  const metadataRefused = input.mode === 'read-only' && input.metadataByMounts !== true
  if (metadataRefused) refuse(METADATA_SYSCALLS)
  if (input.refuseWatches) refuse(WATCH_SYSCALLS)
  rules.push(...setidRules(metadataRefused))
  rules.push({
    name: 'ioctl',
    commands: Object.values(TERMINAL_IOCTLS).filter((c) => !(input.privateDevpts && c === TERMINAL_IOCTLS.TIOCSCTTY)),
    ...(input.mode === 'read-only'
      ? { inodeFamilies: Object.values(INODE_IOCTL_FAMILIES), allowed: Object.values(INODE_IOCTL_ALLOWED) }
      : {}),
  })
  rules.push({
    name: 'fcntl',
    refuseWhen: { arg: 1, oneOf: input.refuseWatches ? [F_SETLEASE, F_NOTIFY] : [F_SETLEASE] },
  })
  // Even in a pid namespace of its own: its pid 1 is the run's supervisor (cordon-exec), whose
  // limits, scheduling and memory placement a command must not change (RLIMIT_NOFILE 0 would keep
  // it from answering the host). So only the caller itself, as without a namespace.
  for (const name of [
    'prlimit64',
    'sched_setaffinity',
    'sched_setscheduler',
    'sched_setparam',
    'sched_setattr',
  ] as const) {
    rules.push({ name, allowOnly: [self(0)] })
  }
  rules.push({ name: 'migrate_pages', allowOnly: [self(0)] })
  rules.push({ name: 'move_pages', allowOnly: [self(0)] })
  rules.push({ name: 'setpriority', allowOnly: [{ arg: 0, oneOf: [PRIO_PROCESS, PRIO_PGRP] }, self(1)] })
  rules.push({ name: 'ioprio_set', allowOnly: [{ arg: 0, oneOf: [IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP] }, self(1)] })

  if (input.network === 'deny') {
    if (input.privateNet)
      rules.push({ name: 'socket', allowOnly: [{ arg: 0, oneOf: [AF.INET, AF.INET6, AF.NETLINK] }] })
    else rules.push({ name: 'socket', refuse: true })
    rules.push({ name: 'socketpair', allowOnly: [{ arg: 0, oneOf: [AF.UNIX] }] })
  } else {
    rules.push({ name: 'socket', refuseWhen: { arg: 0, oneOf: [AF.VSOCK] } })
  }
  return { arch: input.arch, rules }
}

const programs = new Map<string, Buffer>()

/** The encoded program for one plan (memoised: it is a pure function of its inputs). */
export function seccompProgramFor(input: SeccompInput): Buffer {
  const key = JSON.stringify(input)
  let program = programs.get(key)
  if (!program) {
    program = encodeBpf(compileSeccompRules(seccompRulesFor(input)))
    programs.set(key, program)
  }
  return program
}

/**
 * The program loaded before `bwrap` is exec'd (inherited by the sandbox): the architecture check
 * and io_uring only. bwrap itself needs mount, netlink and the metadata calls; the command's own
 * program is loaded inside by cordon-exec.
 */
export function bubblewrapLauncherProgram(arch: SeccompArch): Buffer {
  const key = `${arch}/bubblewrap-launcher`
  let program = programs.get(key)
  if (!program) {
    program = encodeBpf(compileSeccompRules({ arch, rules: IO_URING_SYSCALLS.map((name) => ({ name, refuse: true })) }))
    programs.set(key, program)
  }
  return program
}
