// What known tools print when a class is refused them: a labelled corpus of real messages
// (captured under Landlock and under a cut network on Linux 6.18), each read as its class and
// none as another; ordinary failures that merely share words are read as none.
import { describe, expect, it } from 'vitest'
import type { ClosedClass } from '../../../../src/sandbox/closed-classes/closing-plan.js'
import { messageOf } from '../../../../src/sandbox/closed-classes/messages.js'

const SEMLOCK = `Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/usr/lib/python3.11/multiprocessing/synchronize.py", line 57, in __init__
    sl = self._semlock = _multiprocessing.SemLock(
                         ^^^^^^^^^^^^^^^^^^^^^^^^^
PermissionError: [Errno 13] Permission denied`

const PTY = `  File "/usr/lib/python3.11/pty.py", line 64, in _open_terminal
    raise OSError('out of pty devices')
OSError: out of pty devices`

const PY_SOCKET = `Traceback (most recent call last):
  File "<string>", line 3, in <module>
  File "/usr/lib/python3.11/socket.py", line 232, in __init__
    _socket.socket.__init__(self, family, type, proto, fileno)
PermissionError: [Errno 1] Operation not permitted`

/** Each message and the class it shows. */
const LABELLED: ReadonlyArray<[ClosedClass, string]> = [
  ['shared-memory', SEMLOCK],
  // Under Landlock's read-only view of the host (a mount namespace), /dev/shm refuses with EROFS.
  [
    'shared-memory',
    SEMLOCK.replace('PermissionError: [Errno 13] Permission denied', 'OSError: [Errno 30] Read-only file system'),
  ],
  ['shared-memory', "OSError: [Errno 30] Read-only file system: '/psm_9f8e'\n  in SharedMemory.__init__"],
  ['shared-memory', "PermissionError: [Errno 13] Permission denied: '/psm_1a2b3c'\n  in SharedMemory.__init__"],
  ['shared-memory', 'sem_open: Permission denied'],
  ['shared-memory', "Error: EACCES: permission denied, open '/dev/shm/cache.lock'"],
  ['terminals', PTY],
  ['terminals', 'script: failed to create pseudo-terminal: Permission denied'],
  ['terminals', 'create window failed: fork failed: Permission denied'],
  [
    'terminals',
    '  File "<string>", line 1, in <module>\n    os.openpty()\nPermissionError: [Errno 13] Permission denied',
  ],
  ['terminals', 'posix_openpt: Permission denied'],
  ['unix-sockets', PY_SOCKET],
  ['unix-sockets', 'Error: connect EPERM /run/x.sock'],
  ['unix-sockets', 'Error: listen EPERM: operation not permitted s.sock'],
  ['unix-sockets', '2026/12/02 20:39:45 socat[3] E socket(1, 1, 0): Operation not permitted'],
  ['unix-sockets', 'Error connecting to agent: Operation not permitted'],
  ['unix-sockets', 'nc: socket: Operation not permitted'],
]

/** Failures that share words with the classes and are none of them. */
const ORDINARY = [
  "rm: cannot remove 'x': Permission denied",
  "PermissionError: [Errno 13] Permission denied: '/etc/shadow'",
  'OSError: [Errno 24] Too many open files',
  "curl: (7) Failed to connect to x port 80 after 0 ms: Couldn't connect to server",
  'Error: connect ECONNREFUSED /run/x.sock',
  'fork failed: Resource temporarily unavailable',
  'chmod: changing permissions of /x: Operation not permitted',
]

const CLASSES: readonly ClosedClass[] = ['shared-memory', 'terminals', 'unix-sockets', 'sockets']

describe('messageOf', () => {
  it('reads each labelled message as its class and as no other (sockets share the unix-socket words)', () => {
    for (const [label, text] of LABELLED) {
      const read = CLASSES.filter((c) => messageOf(c, text) !== undefined)
      const expected = label === 'unix-sockets' ? ['unix-sockets', 'sockets'] : [label]
      expect(read, text).toEqual(expected)
    }
  })

  it('says what was met in words (the same message, the same words)', () => {
    expect(messageOf('shared-memory', SEMLOCK)).toBe(
      "Python multiprocessing's semaphore (sem_open in /dev/shm) was refused",
    )
    expect(messageOf('terminals', PTY)).toBe("Python's pty could not open a pseudo-terminal")
    expect(messageOf('unix-sockets', PY_SOCKET)).toBe("Python's socket() for a unix socket was refused")
  })

  it('reads ordinary failures as none', () => {
    for (const text of ORDINARY)
      expect(
        CLASSES.filter((c) => messageOf(c, text) !== undefined),
        text,
      ).toEqual([])
  })
})
