/**
 * Terminals and devices (issue 10, class 4), by path: the session-less host pty of
 * host-fixtures.py (PTS, typed input waiting in it) read, written and injected into after it
 * became the attacker's controlling terminal, the console's TIOCLINUX and its screen (/dev/vcs).
 * Inherited terminals (TIOCSTI, TIOCSCTTY on the command's own stdout) are in terminals.test.ts.
 */
import { type Attack, BOTH, PY_SYSCALL, py } from './attack.js'

/** The console devices are root's (0600) on this host. */
const CONSOLE_IS_ROOTS = {
  nobody: "the console devices (/dev/tty0, /dev/vcs) are root's 0600 here: uid 65534 cannot open them, unconfined too",
}

/** The terminal attacks that name a terminal by path. */
export const TERMINAL_ATTACKS: readonly Attack[] = [
  {
    name: 'read typed input from a session-less host pty by path',
    kind: 'terminals',
    modes: BOTH,
    script: py(
      'import os\ntry:\n  fd=os.open(os.environ["PTS"], os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)\n  if b"cordon-secret" in os.read(fd, 256): print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
    ),
  },
  {
    name: 'write to a session-less host pty by path (spoofed output)',
    kind: 'terminals',
    modes: BOTH,
    script: 'printf "pwned\\n" > "$PTS" && echo BREACH',
  },
  {
    name: 'TIOCSTI into a session-less host pty opened by path (it becomes the controlling terminal)',
    kind: 'terminals',
    modes: BOTH,
    // A new session leader without a terminal opens the pty without O_NOCTTY: it becomes the
    // controlling terminal, and /dev/tty then names it.
    script: py(
      `${PY_SYSCALL}import fcntl, termios
pid = os.fork()
if pid == 0:
  try:
    os.setsid()
    os.open(os.environ["PTS"], os.O_RDWR)
    tty = os.open("/dev/tty", os.O_RDWR)
    for c in b"id\\n": fcntl.ioctl(tty, termios.TIOCSTI, bytes([c]))
    print("BREACH")
  except OSError as e:
    print("refused", e.errno)
  sys.stdout.flush(); os._exit(0)
os.waitpid(pid, 0)`,
    ),
  },
  {
    name: 'TIOCLINUX on the console',
    kind: 'terminals',
    modes: BOTH,
    // subcode 6 (TIOCL_GETSHIFTSTATE) only reads: it proves the ioctl reaches the console driver
    script: py(
      'import fcntl, os\ntry:\n  fd=os.open("/dev/tty0", os.O_RDONLY | os.O_NOCTTY)\n  fcntl.ioctl(fd, 0x541C, bytearray([6, 0])); print("BREACH")\nexcept OSError as e:\n  print("refused", e.errno)',
    ),
    control: { impossible: CONSOLE_IS_ROOTS },
  },
  {
    name: 'read the console screen through /dev/vcs',
    kind: 'terminals',
    modes: BOTH,
    script: 'head -c 64 /dev/vcs > /dev/null && echo BREACH',
    control: { impossible: CONSOLE_IS_ROOTS },
  },
]
