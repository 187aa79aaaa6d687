/**
 * Resources (issue 10, class 12): core dumps stay off (RLIMIT_CORE is 0, hard, in every confined
 * run) and the policy's `limits` bind: a file beyond `fileSizeBytes`, an allocation beyond
 * `addressSpaceBytes`, more processes than `processes` (a pids cgroup where a root host can make
 * one; else RLIMIT_NPROC, which does not bind uid 0: there the account must say so). Unconfined, the host's limits allow all of them.
 */
import { cgroupHierarchies } from '../../../src/subprocess/cgroup/hierarchy.js'
import { type Attack, BOTH, py } from './attack.js'

/** A root host holds a run's processes in a pids cgroup where it can make one (issue 27); else RLIMIT_NPROC, which does not bind uid 0. */
const rootHasPidsCgroup = process.getuid?.() === 0 && cgroupHierarchies().dirs.pids !== undefined

/** The resource attacks. */
export const RESOURCE_ATTACKS: readonly Attack[] = [
  {
    name: 'core dumps: raise RLIMIT_CORE',
    kind: 'resources',
    modes: BOTH,
    script:
      '[ "$(ulimit -H -c)" = 0 ] || echo BREACH hard; ulimit -c unlimited 2>/dev/null && echo BREACH raised; true',
  },
  {
    name: 'a file beyond limits.fileSizeBytes',
    kind: 'resources',
    modes: BOTH,
    limits: { fileSizeBytes: 65536 },
    // TMPDIR is writable in every confined mode; the control has none and writes in the root
    script: 'head -c 1048576 /dev/zero > "${TMPDIR:-$ROOT}/big" && echo BREACH; rm -f "${TMPDIR:-$ROOT}/big"; true',
  },
  {
    name: 'an allocation beyond limits.addressSpaceBytes',
    kind: 'resources',
    modes: BOTH,
    limits: { addressSpaceBytes: 512 << 20 },
    script: py('try:\n  b = bytearray(1 << 30); print("BREACH")\nexcept MemoryError:\n  print("refused")'),
  },
  {
    name: 'more processes than limits.processes',
    kind: 'resources',
    modes: BOTH,
    limits: { processes: 100 },
    ...(rootHasPidsCgroup
      ? {}
      : { ungovernedFor: { root: { class: 'resources', how: 'RLIMIT_NPROC does not bind uid 0' } } }),
    // 200 children that wait to be killed: more than the limit allows the whole uid
    script: py(
      'import os, signal\nkids = []\nfor _ in range(200):\n  try:\n    pid = os.fork()\n  except OSError:\n    break\n  if pid == 0:\n    signal.pause(); os._exit(0)\n  kids.append(pid)\nprint("forked", len(kids))\nif len(kids) >= 200: print("BREACH")\nfor k in kids: os.kill(k, signal.SIGKILL)\nfor k in kids: os.waitpid(k, 0)',
    ),
  },
]
