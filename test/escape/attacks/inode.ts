/**
 * Operations through a descriptor opened read-only that change the file for others (issue 10,
 * classes 5 and 11): inode-changing ioctls under read-only, on a file outside the roots and on one
 * in the root, and leases (which stall the host's writers) in every mode. The fixtures live under
 * the host temp dir, ext4 on this host, which supports all three ioctls (a control proves it).
 */
import { type Attack, BOTH, py, RO } from './attack.js'

const onReadOnlyFds = (body: string) =>
  py(
    `import fcntl, os, struct\nfor path in (os.environ["OUT"] + "/victim", os.environ["ROOT"] + "/file"):\n  fd=os.open(path, os.O_RDONLY)\n  try:\n${body
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n')}\n    print("BREACH", path)\n  except OSError as e:\n    print("refused", path, e.errno)`,
  )

/** The inode-ioctl and lease attacks. */
export const INODE_ATTACKS: readonly Attack[] = [
  {
    name: 'FS_IOC_SETVERSION on files opened read-only',
    kind: 'inode ioctls',
    modes: RO,
    script: onReadOnlyFds('fcntl.ioctl(fd, 0x40087602, struct.pack("l", 12345))'),
  },
  {
    name: 'FS_IOC_SETFLAGS (nodump) on files opened read-only',
    kind: 'inode ioctls',
    modes: RO,
    script: onReadOnlyFds('fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x40))'),
  },
  {
    name: 'FS_IOC_FSSETXATTR (nodump) on files opened read-only',
    kind: 'inode ioctls',
    modes: RO,
    // struct fsxattr: xflags FS_XFLAG_NODUMP, extsize, nextents, projid, cowextsize, pad[8]
    script: onReadOnlyFds('fcntl.ioctl(fd, 0x401C5820, struct.pack("IIIII8s", 0x80, 0, 0, 0, 0, b""))'),
  },
  {
    name: 'F_SETLEASE on a readable file outside the roots',
    kind: 'leases',
    modes: BOTH,
    script: py(
      'import fcntl, os\nfd=os.open(os.environ["OUT"] + "/victim", os.O_RDONLY)\ntry:\n  fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
    ),
  },
  {
    name: 'F_SETLEASE on a root file in read-only',
    kind: 'leases',
    modes: RO,
    script: py(
      'import fcntl, os\nfd=os.open(os.environ["ROOT"] + "/file", os.O_RDONLY)\ntry:\n  fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
    ),
  },
]
