/**
 * Special files and descriptors outside the roots (issue 10, class 9): the host FIFO (a host
 * process reads it) and the host's listening unix socket of host-fixtures.py, which a read-only
 * bind does not protect, and writes through a directory descriptor of an outside directory
 * (reopened through /proc/self/fd, or as an openat base).
 */
import { type Attack, BOTH, py } from './attack.js'

const connectHostSocket = py(
  'import os, socket\ns=socket.socket(socket.AF_UNIX)\ntry:\n  s.connect(os.environ["HOSTSOCK"]); s.sendall(b"pwned"); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
)

/** The special-file and descriptor attacks. */
export const DESCRIPTOR_ATTACKS: readonly Attack[] = [
  {
    name: 'write into a host FIFO outside the roots',
    kind: 'files',
    modes: BOTH,
    script: 'printf pwned > "$HOSTFIFO" && echo BREACH',
  },
  {
    name: 'connect to a host unix socket outside the roots',
    kind: 'files',
    modes: BOTH,
    script: connectHostSocket,
    // Under network: inherit no backend can refuse connect() by path (no Landlock right, seccomp
    // cannot read the address): the run's account must say so; network: deny refuses it (below).
    ungovernedFor: {
      root: { class: 'network', how: 'unix sockets' },
      nobody: { class: 'network', how: 'unix sockets' },
    },
  },
  {
    name: 'connect to a host unix socket outside the roots with network deny',
    kind: 'network',
    modes: BOTH,
    network: 'deny',
    script: connectHostSocket,
  },
  {
    name: 'create through /proc/self/fd of an outside directory descriptor',
    kind: 'files',
    modes: BOTH,
    script: 'exec 3< "$OUT"; echo pwned > /proc/self/fd/3/viafd && echo BREACH',
  },
  {
    name: 'openat relative to an outside directory descriptor',
    kind: 'files',
    modes: BOTH,
    script: py(
      'import os\nd=os.open(os.environ["OUT"], os.O_RDONLY | os.O_DIRECTORY)\ntry:\n  os.close(os.open("viaat", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=d)); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)\ntry:\n  os.rename("victim", "renamed", src_dir_fd=d, dst_dir_fd=d); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
    ),
  },
]
