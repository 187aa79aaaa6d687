/**
 * SysV IPC and POSIX message queues (issue 10, class 3): the host objects of host-fixtures.py
 * (a shared-memory segment, a semaphore and a message queue holding a secret, a POSIX queue) read,
 * overwritten, drained and removed from inside, and new objects created (those succeed inside a
 * private IPC namespace only, which the host check sees).
 */
import { type Attack, BOTH, PRIVATE_IPC, PY_SYSCALL, py } from './attack.js'

const ipc = (body: string) =>
  py(
    `${PY_SYSCALL}libc.shmat.restype=ctypes.c_void_p\nlibc.shmat.argtypes=[ctypes.c_int, ctypes.c_void_p, ctypes.c_int]\n${body}`,
  )

/** The IPC attacks. */
export const IPC_ATTACKS: readonly Attack[] = [
  {
    name: 'read the host SysV shared-memory segment',
    kind: 'ipc',
    modes: BOTH,
    script: ipc(
      'a=libc.shmat(int(os.environ["SHMID"]), None, 0o10000)\nprint("shmat", a, ctypes.get_errno())\nif a not in (None, 2**64-1) and b"cordon-secret" in ctypes.string_at(a, 64): print("BREACH")',
    ),
  },
  {
    name: 'overwrite the host SysV shared-memory segment',
    kind: 'ipc',
    modes: BOTH,
    script: ipc(
      'a=libc.shmat(int(os.environ["SHMID"]), None, 0)\nprint("shmat", a, ctypes.get_errno())\nif a not in (None, 2**64-1):\n  ctypes.memmove(a, b"pwned", 5); print("BREACH")',
    ),
  },
  {
    name: 'receive the host SysV message',
    kind: 'ipc',
    modes: BOTH,
    script: ipc(
      'buf=ctypes.create_string_buffer(128)\nn=libc.msgrcv(int(os.environ["MSGID"]), buf, 64, 0, 0o4000)\nprint("msgrcv", n, ctypes.get_errno())\nif n > 0 and b"cordon-secret" in buf.raw: print("BREACH")',
    ),
  },
  {
    name: 'operate the host SysV semaphore',
    kind: 'ipc',
    modes: BOTH,
    // struct sembuf { sem_num 0, sem_op -1, sem_flg IPC_NOWAIT }
    script: ipc(
      'op=ctypes.create_string_buffer(struct.pack("HhH", 0, -1, 0o4000))\nr=libc.semop(int(os.environ["SEMID"]), op, 1)\nprint("semop", r, ctypes.get_errno())\nif r == 0: print("BREACH")',
    ),
  },
  {
    name: 'remove the host SysV objects',
    kind: 'ipc',
    modes: BOTH,
    script:
      'ipcrm -m "$SHMID" && echo BREACH shm; ipcrm -s "$SEMID" && echo BREACH sem; ipcrm -q "$MSGID" && echo BREACH msg; true',
  },
  {
    name: 'create SysV objects under a host key',
    kind: 'ipc',
    modes: BOTH,
    privateNamespace: PRIVATE_IPC,
    script: ipc(
      'k=int(os.environ["SYSVKEY"])\nfor name, call in (("shm", lambda: libc.shmget(k, 4096, 0o1600)), ("sem", lambda: libc.semget(k, 1, 0o1600)), ("msg", lambda: libc.msgget(k, 0o1600))):\n  r=call(); print(name, r, ctypes.get_errno())\n  if r >= 0: print("BREACH", name)',
    ),
  },
  {
    name: 'read the host POSIX message queue',
    kind: 'ipc',
    modes: BOTH,
    script: ipc(
      'q=libc.mq_open(os.environ["MQNAME"].encode(), os.O_RDONLY | os.O_NONBLOCK, 0, None)\nprint("mq_open", q, ctypes.get_errno())\nbuf=ctypes.create_string_buffer(8192)\nif q >= 0 and libc.mq_receive(q, buf, 8192, None) > 0 and b"cordon-secret" in buf.raw: print("BREACH")',
    ),
  },
  {
    name: 'unlink the host POSIX message queue',
    kind: 'ipc',
    modes: BOTH,
    script: ipc(
      'r=libc.mq_unlink(os.environ["MQNAME"].encode())\nprint("mq_unlink", r, ctypes.get_errno())\nif r == 0: print("BREACH")',
    ),
  },
  {
    name: 'create a POSIX message queue',
    kind: 'ipc',
    modes: BOTH,
    privateNamespace: PRIVATE_IPC,
    script: ipc(
      'q=libc.mq_open((os.environ["MQNAME"] + "-new").encode(), os.O_CREAT | os.O_RDWR, 0o600, None)\nprint("mq_open", q, ctypes.get_errno())\nif q >= 0: print("BREACH")',
    ),
  },
]
