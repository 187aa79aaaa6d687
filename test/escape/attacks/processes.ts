/**
 * Processes outside the sandbox (issue 10, class 1): resource, scheduling, priority, memory and
 * descriptor control of the unconfined HELPER (same user) and of the runner itself (HOSTPID, set
 * to the values it already has, so a control changes nothing of the runner), and signals by
 * pidfd and by SIGIO ownership. Landlock's signal scope does not cover the first kind.
 */
import { type Attack, BOTH, NOBODY_LACKS, PY_SYSCALL, py } from './attack.js'

const helper = (body: string) => py(`${PY_SYSCALL}pid=int(sys.argv[1])\n${body}`, '"$HELPER"')

/** The process-control attacks. */
export const PROCESS_ATTACKS: readonly Attack[] = [
  {
    name: 'prlimit64 lowers the helper RLIMIT_NOFILE',
    kind: 'processes',
    modes: BOTH,
    script: helper('import resource\nresource.prlimit(pid, resource.RLIMIT_NOFILE, (16, 16)); print("BREACH")'),
  },
  {
    name: 'prlimit64, setpriority and sched_setaffinity on the runner (its own values)',
    kind: 'processes',
    modes: BOTH,
    script: py(
      `${PY_SYSCALL}import resource\npid=int(sys.argv[1])
for name, call in (
  ("prlimit", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, resource.prlimit(pid, resource.RLIMIT_NOFILE))),
  ("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid))),
  ("affinity", lambda: os.sched_setaffinity(pid, os.sched_getaffinity(pid))),
):
  try:
    call(); print("BREACH", name)
  except OSError as e:
    print("refused", name, e.errno)`,
      '"$HOSTPID"',
    ),
  },
  {
    name: 'setpriority renices the helper to 19',
    kind: 'processes',
    modes: BOTH,
    // 19, the lowest priority: any user may lower its own process's priority to it from any nice the
    // suite starts at (`nice -n 10 npx vitest`), so the control shows the call is allowed.
    script: 'renice -n 19 -p "$HELPER" && echo BREACH',
  },
  {
    name: 'sched_setaffinity pins the helper to one CPU',
    kind: 'processes',
    modes: BOTH,
    script: helper('os.sched_setaffinity(pid, {0}); print("BREACH")'),
  },
  {
    name: 'sched_setscheduler makes the helper SCHED_BATCH',
    kind: 'processes',
    modes: BOTH,
    script: helper('os.sched_setscheduler(pid, os.SCHED_BATCH, os.sched_param(0)); print("BREACH")'),
  },
  {
    name: 'sched_setparam on the helper',
    kind: 'processes',
    modes: BOTH,
    script: helper('os.sched_setparam(pid, os.sched_param(0)); print("BREACH")'),
  },
  {
    name: 'sched_setattr sets the helper nice to 19',
    kind: 'processes',
    modes: BOTH,
    // struct sched_attr (v1, 48 bytes): size, policy SCHED_OTHER, flags, nice 19, priority, runtime,
    // deadline, period. 19, as for renice above: allowed unconfined from any starting nice.
    script: helper(
      'attr=ctypes.create_string_buffer(struct.pack("IIQiIQQQ", 48, 0, 0, 19, 0, 0, 0, 0))\nr, e = sc(314, pid, attr, 0)\nprint("sched_setattr", r, e)\nif r == 0: print("BREACH")',
    ),
  },
  {
    name: 'ioprio_set puts the helper in the idle I/O class',
    kind: 'processes',
    modes: BOTH,
    script: 'ionice -c 3 -p "$HELPER" && echo BREACH',
  },
  {
    name: 'migrate_pages of the helper',
    kind: 'processes',
    modes: BOTH,
    script: helper(
      'old=ctypes.c_ulong(1); new=ctypes.c_ulong(1)\nr, e = sc(256, pid, 64, ctypes.byref(old), ctypes.byref(new))\nprint("migrate_pages", r, e)\nif r >= 0: print("BREACH")',
    ),
  },
  {
    name: 'move_pages of the helper',
    kind: 'processes',
    modes: BOTH,
    script: helper(
      'r, e = sc(279, pid, 0, None, None, None, 0)\nprint("move_pages", r, e)\nif r >= 0: print("BREACH")',
    ),
  },
  {
    name: 'process_madvise of the helper through a pidfd',
    kind: 'processes',
    modes: BOTH,
    script: helper(
      'fd, e = sc(434, pid, 0)\nprint("pidfd_open", fd, e)\nif fd >= 0:\n  r, e = sc(440, fd, None, 0, 20, 0)\n  print("process_madvise", r, e)\n  if r >= 0: print("BREACH")',
    ),
    control: { impossible: NOBODY_LACKS('CAP_SYS_NICE (process_madvise of another process needs it)') },
  },
  {
    name: 'pidfd_getfd takes a descriptor of the helper',
    kind: 'processes',
    modes: BOTH,
    script: helper(
      'fd, e = sc(434, pid, 0)\nprint("pidfd_open", fd, e)\nif fd >= 0:\n  r, e = sc(438, fd, 0, 0)\n  print("pidfd_getfd", r, e)\n  if r >= 0: print("BREACH")',
    ),
  },
  {
    name: 'pidfd_send_signal kills the helper',
    kind: 'processes',
    modes: BOTH,
    script: helper(
      'fd, e = sc(434, pid, 0)\nprint("pidfd_open", fd, e)\nif fd >= 0:\n  r, e = sc(424, fd, 9, None, 0)\n  print("pidfd_send_signal", r, e)\n  if r == 0: print("BREACH")',
    ),
  },
  {
    name: 'SIGIO to the helper through F_SETOWN',
    kind: 'processes',
    modes: BOTH,
    // The helper (sleep) dies of SIGIO's default action when the signal reaches it.
    script: helper(
      'import fcntl, time\nr, w = os.pipe()\ntry:\n  fcntl.fcntl(r, fcntl.F_SETOWN, pid)\n  fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)\n  os.write(w, b"x")\nexcept OSError as e:\n  print("refused", e.errno)\ntime.sleep(0.2)',
    ),
  },
  {
    name: 'signal 0 to the runner process group',
    kind: 'processes',
    modes: BOTH,
    // the group from /proc (field 5 of stat); dash's kill takes "-PGID" after the signal
    script: 'g=$(cut -d" " -f5 "/proc/$HOSTPID/stat"); [ -n "$g" ] && kill -0 "-$g" && echo BREACH',
  },
]
