/**
 * The escape attacks on the file rules and the kernel surface (mounts, namespaces, capabilities,
 * sockets), and ATTACKS: every attack of every class (the class lists are in the other files of this folder). See
 * attack.ts for what an attack is and the variables its script gets.
 */
import { type Attack, BOTH, NOBODY_LACKS, PRIVATE_NET, py, RO } from './attack.js'
import { DESCRIPTOR_ATTACKS } from './descriptors.js'
import { INODE_ATTACKS } from './inode.js'
import { IPC_ATTACKS } from './ipc.js'
import { KEYRING_ATTACKS } from './keyrings.js'
import { PROCESS_ATTACKS } from './processes.js'
import { RESOURCE_ATTACKS } from './resources.js'
import { TERMINAL_ATTACKS } from './terminals.js'

export type { Attack, AttackMode } from './attack.js'

/** No module support in this kernel: finit_module fails with ENOSYS for everyone. */
const NO_MODULES = 'this kernel is built without module support (finit_module: ENOSYS, unconfined too)'

/** The file-rule and kernel-surface attacks. */
export const FILE_AND_KERNEL_ATTACKS: readonly Attack[] = [
  { name: 'absolute path write outside', kind: 'files', modes: BOTH, script: 'echo pwned > "$OUT/new" && echo BREACH' },
  {
    name: 'overwrite an outside file',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "$OUT/victim" && echo BREACH',
  },
  {
    name: 'append to an outside file',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned >> "$OUT/victim" && echo BREACH',
  },
  {
    name: '.. from the root',
    kind: 'files',
    modes: BOTH,
    script:
      'cd "$ROOT" && echo pwned > ../outside/dotdot && echo BREACH; echo x > "$ROOT/../outside/dotdot2" && echo BREACH',
  },
  {
    name: 'prefix sibling of the root (root2)',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "${ROOT}2/new" && echo BREACH',
  },
  {
    name: 'planted symlink in the root pointing out',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "$ROOT/link/viasym" && echo BREACH; echo pwned > "$ROOT/link/victim" && echo BREACH',
  },
  {
    name: 'symlink made by the command pointing out',
    kind: 'files',
    modes: BOTH,
    script: 'ln -s "$OUT" "$ROOT/l2"; echo pwned > "$ROOT/l2/viasym2" && echo BREACH',
  },
  {
    name: 'hardlink of an outside file into the root',
    kind: 'files',
    modes: BOTH,
    script: 'ln "$OUT/victim" "$ROOT/hl" && echo BREACH; echo pwned >> "$ROOT/hl" 2>/dev/null; true',
  },
  {
    name: 'hardlink from the root to outside',
    kind: 'files',
    modes: BOTH,
    script: 'ln "$ROOT/file" "$OUT/hl" && echo BREACH',
  },
  {
    name: 'rename out of the root',
    kind: 'files',
    modes: BOTH,
    script: `${py('import os,sys; os.rename(sys.argv[1], sys.argv[2])', '"$ROOT/moveme"', '"$OUT/moved"')} && echo BREACH; mv "$ROOT/moveme" "$OUT/moved2" && echo BREACH`,
  },
  {
    name: 'rename into the root',
    kind: 'files',
    modes: BOTH,
    script: 'mv "$OUT/victim" "$ROOT/stolen" && echo BREACH',
  },
  {
    name: 'rename within outside',
    kind: 'files',
    modes: BOTH,
    script: 'mv "$OUT/victim" "$OUT/renamed" && echo BREACH',
  },
  {
    name: 'rename the root itself (ancestor rename)',
    kind: 'files',
    modes: BOTH,
    script: 'mv "$ROOT" "$BASE/root-moved" && echo BREACH',
  },
  {
    name: 'remove an outside file',
    kind: 'files',
    modes: BOTH,
    script: 'rm -f "$OUT/victim"; [ -e "$OUT/victim" ] || echo BREACH',
  },
  {
    name: 'remove an outside directory',
    kind: 'files',
    modes: BOTH,
    script: 'rm -rf "$OUT/dir"; [ -d "$OUT/dir" ] || echo BREACH',
  },
  { name: 'mkdir outside', kind: 'files', modes: BOTH, script: 'mkdir "$OUT/newdir" && echo BREACH' },
  { name: 'symlink created outside', kind: 'files', modes: BOTH, script: 'ln -s /etc "$OUT/sym" && echo BREACH' },
  {
    name: '/proc/self/root/...',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "/proc/self/root$OUT/procroot" && echo BREACH',
  },
  {
    name: '/proc/self/cwd/...',
    kind: 'files',
    modes: BOTH,
    script: 'cd "$OUT" && echo pwned > /proc/self/cwd/viacwd && echo BREACH',
  },
  {
    name: '/proc/<host pid>/cwd/...',
    kind: 'files',
    modes: BOTH,
    script:
      'echo pwned > "/proc/$HOSTPID/cwd/.cordon-escape-$TAG" && echo BREACH; echo pwned > "/proc/$HELPER/cwd/viahelper" && echo BREACH',
  },
  {
    name: '/proc/<host pid>/root/...',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "/proc/$HELPER/root$OUT/viahelperroot" && echo BREACH',
  },
  {
    name: 'write via /proc/self/fd of a read-only fd',
    kind: 'files',
    modes: BOTH,
    script: 'exec 3< "$OUT/victim"; echo pwned > /proc/self/fd/3 && echo BREACH',
  },
  {
    name: '/dev/shm',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "/dev/shm/cordon-escape-$TAG" && echo BREACH',
    privateNamespace: { bubblewrap: 'each session gets its own /dev/shm' },
  },
  {
    name: 'the host /tmp',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "/tmp/cordon-escape-$TAG" && echo BREACH; mkdir "/tmp/cordon-escape-$TAG.d" && echo BREACH',
  },
  {
    name: 'the host /var/tmp',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "/var/tmp/cordon-escape-$TAG" && echo BREACH',
  },
  {
    name: 'a new file in /dev',
    kind: 'files',
    modes: BOTH,
    script: 'echo pwned > "/dev/cordon-escape-$TAG" && echo BREACH',
    control: { impossible: { nobody: "/dev is root's (0755): uid 65534 cannot create in it, unconfined too" } },
  },
  {
    name: 'truncate an outside file',
    kind: 'files',
    modes: BOTH,
    script: 'truncate -s 0 "$OUT/victim" && echo BREACH; : > "$OUT/victim" && echo BREACH',
  },
  {
    name: 'truncate a root file in read-only',
    kind: 'files',
    modes: RO,
    script: 'truncate -s 1 "$ROOT/file" && echo BREACH',
  },
  {
    name: 'write into the root in read-only',
    kind: 'files',
    modes: RO,
    script: 'echo pwned > "$ROOT/new" && echo BREACH; echo pwned >> "$ROOT/file" && echo BREACH',
  },
  {
    name: 'remove and mkdir in the root in read-only',
    kind: 'files',
    modes: RO,
    script: 'rm -f "$ROOT/file"; [ -e "$ROOT/file" ] || echo BREACH; mkdir "$ROOT/d" && echo BREACH',
  },
  {
    name: 'chmod in read-only',
    kind: 'metadata',
    modes: RO,
    script:
      'chmod 777 "$ROOT/file" && echo BREACH; chmod 700 "$OUT/victim" && echo BREACH; chmod 700 "$ROOT" && echo BREACH',
  },
  {
    name: 'chown in read-only',
    kind: 'metadata',
    modes: RO,
    script:
      'chown "$(id -u):$(id -g)" "$ROOT/file" && echo BREACH; if [ "$(id -u)" = 0 ]; then chown 1:1 "$OUT/victim" && echo BREACH; fi; chown -h "$(id -u)" "$ROOT/link" && echo BREACH',
  },
  {
    name: 'utime in read-only',
    kind: 'metadata',
    modes: RO,
    script: 'touch -d 2001-01-01 "$ROOT/file" && echo BREACH; touch -m "$OUT/victim" && echo BREACH',
  },
  {
    name: 'xattr in read-only',
    kind: 'metadata',
    modes: RO,
    script: `${py('import os,sys; os.setxattr(sys.argv[1], "user.cordon", b"1")', '"$ROOT/file"')} && echo BREACH; ${py('import os,sys; os.removexattr(sys.argv[1], "user.keep")', '"$ROOT/file"')} && echo BREACH`,
  },
  {
    name: 'FS_IOC_SETFLAGS ioctl in read-only',
    kind: 'inode ioctls',
    modes: RO,
    script: py(
      'import os,sys,fcntl,struct\nfd=os.open(sys.argv[1], os.O_RDONLY)\ntry:\n  fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0)); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
      '"$ROOT/file"',
    ),
  },
  { name: 'mkfifo outside', kind: 'files', modes: BOTH, script: 'mkfifo "$OUT/fifo" && echo BREACH' },
  { name: 'mkfifo in the root in read-only', kind: 'files', modes: RO, script: 'mkfifo "$ROOT/fifo" && echo BREACH' },
  {
    name: 'mknod of a block device in the root',
    kind: 'kernel',
    modes: BOTH,
    script: 'mknod "$ROOT/blk" b 7 0 && echo BREACH',
    control: { impossible: NOBODY_LACKS('CAP_MKNOD') },
  },
  {
    name: 'mknod of a character device in the root',
    kind: 'kernel',
    modes: BOTH,
    script: 'mknod "$ROOT/null2" c 1 3 && echo BREACH',
    control: { impossible: NOBODY_LACKS('CAP_MKNOD') },
  },
  {
    name: 'remount of / (a read-only bind made writable) and a mount over the root',
    kind: 'kernel',
    modes: BOTH,
    script: 'mount -o remount,bind,rw / && echo BREACH; mount -t tmpfs "cordon-$TAG" "$ROOT" && echo BREACH',
    // the control runs in a private mount namespace: a bind remount there changes only its copy
    control: { wrap: ['unshare', '-m', '--propagation', 'private'], impossible: NOBODY_LACKS('CAP_SYS_ADMIN') },
  },
  {
    name: 'a module load',
    kind: 'kernel',
    modes: BOTH,
    script: py(
      'import ctypes,os\nlibc=ctypes.CDLL(None, use_errno=True)\nfd=os.open("/dev/null", os.O_RDONLY)\nr=libc.syscall(313, fd, b"", 0)\ne=ctypes.get_errno()\nprint("errno", e)\n# EPERM: no CAP_SYS_MODULE; ENOSYS: this kernel has no module support at all\nif r == 0 or e not in (1, 38): print("BREACH")',
    ),
    control: { impossible: { root: NO_MODULES, nobody: NO_MODULES } },
  },
  {
    name: 'a unix socket file outside',
    kind: 'files',
    modes: BOTH,
    script: `${py('import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); print("BREACH")', '"$OUT/sock"')}`,
  },
  {
    name: 'a unix socket file in the root in read-only',
    kind: 'files',
    modes: RO,
    script: `${py('import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); print("BREACH")', '"$ROOT/sock"')}`,
  },
  {
    name: 'signals to the host',
    kind: 'processes',
    modes: BOTH,
    script:
      'kill -0 "$HOSTPID" && echo BREACH; kill -CONT "$HELPER" && echo BREACH; kill -KILL "$HELPER" && echo BREACH',
  },
  {
    name: 'ptrace of the host',
    kind: 'processes',
    modes: BOTH,
    script:
      py(
        'import ctypes,sys\nlibc=ctypes.CDLL(None, use_errno=True)\npid=int(sys.argv[1])\nif libc.ptrace(16, pid, 0, 0) == 0:\n  print("BREACH"); libc.ptrace(17, pid, 0, 0)',
        '"$HELPER"',
      ) +
      '; cat "/proc/$HELPER/environ" >/dev/null && echo BREACH; head -c1 "/proc/$HELPER/mem" >/dev/null 2>&1 && echo BREACH; true',
  },
  {
    name: 'a host abstract unix socket',
    kind: 'network',
    modes: BOTH,
    script: py(
      'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\\0" + sys.argv[1]); print("BREACH")',
      '"$ABSTRACT"',
    ),
  },
  {
    name: 'TCP connect with network deny',
    kind: 'network',
    modes: BOTH,
    network: 'deny',
    script: py(
      'import socket,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2); print("BREACH")',
      '"$TCPPORT"',
    ),
  },
  {
    name: 'TCP bind with network deny',
    kind: 'network',
    modes: BOTH,
    network: 'deny',
    privateNamespace: PRIVATE_NET,
    script: py('import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("BREACH")'),
  },
  {
    name: 'UDP with network deny',
    kind: 'network',
    modes: BOTH,
    network: 'deny',
    privateNamespace: PRIVATE_NET,
    script: py(
      'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", int(sys.argv[1]))); print("BREACH")',
      '"$UDPPORT"',
    ),
  },
  {
    name: 'IPv6, netlink and packet sockets with network deny',
    kind: 'network',
    modes: BOTH,
    network: 'deny',
    privateNamespace: PRIVATE_NET,
    script: py(
      'import socket\nfor fam, typ in ((socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW), (17, socket.SOCK_RAW), (40, socket.SOCK_STREAM)):\n  try:\n    socket.socket(fam, typ); print("BREACH", fam)\n  except OSError as e:\n    print("refused", fam, e.errno)',
    ),
  },
  {
    name: 'io_uring',
    kind: 'kernel',
    modes: BOTH,
    script: py(
      'import ctypes\nlibc=ctypes.CDLL(None, use_errno=True)\nparams=ctypes.create_string_buffer(120)\nfd=libc.syscall(425, 8, params)\nprint("fd", fd, "errno", ctypes.get_errno())\nif fd >= 0: print("BREACH")',
    ),
  },
  {
    name: 'a user namespace inside the sandbox',
    kind: 'kernel',
    modes: BOTH,
    script:
      'unshare -Urm sh -c \'echo pwned > "$OUT/userns" && echo BREACH; mount -t tmpfs none "$OUT" && echo BREACH; mount --bind "$ROOT" "$OUT" && echo BREACH; chmod 700 "$OUT/victim" 2>/dev/null; true\'; true',
  },
  {
    name: 'inherited descriptors',
    kind: 'descriptors',
    modes: BOTH,
    script: py(
      'import os\nfor fd in os.listdir("/proc/self/fd"):\n  if int(fd) > 2:\n    t = os.readlink("/proc/self/fd/" + fd) if os.path.exists("/proc/self/fd/" + fd) else "(closed)"\n    if not (t == "(closed)" or (t.startswith("/proc/") and t.endswith("/fd"))): print("BREACH fd", fd, t)',
    ),
    // nothing leaks into an unconfined child either: the control is handed a host file as fd 3
    control: { leakFd: true },
  },
  {
    name: 'capabilities and no_new_privs',
    kind: 'kernel',
    modes: BOTH,
    script:
      "grep -Eq '^CapEff:\\s+0+$' /proc/self/status || echo BREACH eff; if [ \"$(id -u)\" = 0 ]; then grep -Eq '^CapBnd:\\s+0+$' /proc/self/status || echo BREACH bnd; fi; grep -Eq '^CapPrm:\\s+0+$' /proc/self/status || echo BREACH prm; grep -Eq '^NoNewPrivs:\\s+1$' /proc/self/status || echo BREACH nnp",
  },
  {
    name: 'chroot',
    kind: 'kernel',
    modes: BOTH,
    script: 'chroot / /bin/true && echo BREACH',
    control: { impossible: NOBODY_LACKS('CAP_SYS_CHROOT') },
  },
  {
    name: 'sethostname (same name)',
    kind: 'kernel',
    modes: BOTH,
    script: 'hostname "$(hostname)" && echo BREACH',
    control: { impossible: NOBODY_LACKS('CAP_SYS_ADMIN') },
  },
  {
    name: 'sysctl write (same value)',
    kind: 'kernel',
    modes: BOTH,
    // the host name, not the domain name: an empty domain name reads "(none)", which is not its value
    script: 'h=$(cat /proc/sys/kernel/hostname); echo "$h" > /proc/sys/kernel/hostname && echo BREACH',
    control: {
      impossible: { nobody: "/proc/sys/kernel/hostname is root's (0644): uid 65534 cannot write it, unconfined too" },
    },
  },
]

/** Every attack of every class; at least 40, each under read-only and/or workspace-write. */
export const ATTACKS: readonly Attack[] = [
  ...FILE_AND_KERNEL_ATTACKS,
  ...PROCESS_ATTACKS,
  ...IPC_ATTACKS,
  ...KEYRING_ATTACKS,
  ...TERMINAL_ATTACKS,
  ...INODE_ATTACKS,
  ...DESCRIPTOR_ATTACKS,
  ...RESOURCE_ATTACKS,
]
