/**
 * The attacks each limit stops (issue 27), as data: a script, the limits it runs under, and how
 * its unconfined control is bounded (every control runs in a cgroup the test made, so a fork or
 * memory attack that works cannot hurt this machine). A script prints BREACH when what the limit
 * should have stopped happened.
 */
import type { ResourceLimits } from '../../../../src/policy/vocabulary.js'

/** One attack on a limit. */
export interface LimitAttack {
  name: string
  limits: ResourceLimits
  script: string
  /** The bounds of the control's cgroup (generous, but finite). */
  control: { pids: number; memoryBytes: number }
  /** What the limit needs from the host (a root host: a cgroup v1 controller, a tmpfs mount), else it is not governed. */
  needs?: 'memory' | 'tmpfs'
  /** The class whose account must own up where the host cannot hold the limit. */
  klass: string
  /** A run that only proves the host stays responsive (no control: it is not bounded enough for one). */
  stressOnly?: boolean
  /** Users whose control can succeed at all (default: both); for the others the operation is impossible anyway. */
  controlUsers?: ReadonlyArray<'root' | 'nobody'>
}

const py = (code: string) => `exec python3 -c '${code.replace(/'/g, "'\\''")}'`

const MIB = 1024 * 1024

/** The attacks, in the order they run. */
export const LIMIT_ATTACKS: readonly LimitAttack[] = [
  {
    name: 'more processes than limits.processes',
    limits: { processes: 100 },
    klass: 'resources',
    control: { pids: 1000, memoryBytes: 1024 * MIB },
    script: py(
      'import os, signal\nkids = []\nfor _ in range(300):\n  try:\n    pid = os.fork()\n  except OSError:\n    break\n  if pid == 0:\n    signal.pause(); os._exit(0)\n  kids.append(pid)\nprint("forked", len(kids))\nif len(kids) >= 300: print("BREACH")\nfor k in kids: os.kill(k, signal.SIGKILL)\nfor k in kids: os.waitpid(k, 0)',
    ),
  },
  {
    name: 'a fork bomb against limits.processes',
    limits: { processes: 256 },
    klass: 'resources',
    control: { pids: 256, memoryBytes: 512 * MIB },
    stressOnly: true,
    // The command lives on 3 s while the bomb fills the bound; its end ends the whole tree.
    script: 'bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 3; echo survived',
  },
  {
    name: 'more memory than limits.memoryBytes',
    limits: { memoryBytes: 256 * MIB },
    needs: 'memory',
    klass: 'memory',
    control: { pids: 100, memoryBytes: 1024 * MIB },
    // Pages written, not only reserved: 10 MiB at a time up to 600 MiB.
    script: py(
      'chunks = []\nfor i in range(60):\n  chunks.append(b"\\x01" * (10 << 20))\nprint("allocated", len(chunks) * 10, "MiB", flush=True)\nif len(chunks) == 60: print("BREACH")',
    ),
  },
  {
    name: 'more CPU time than limits.cpuSeconds',
    limits: { cpuSeconds: 1 },
    klass: 'cpu',
    control: { pids: 100, memoryBytes: 256 * MIB },
    script: py('import time\nwhile time.process_time() < 3: pass\nprint("BREACH")'),
  },
  {
    name: 'lowering the raised oom_score_adj',
    limits: {},
    klass: 'memory',
    control: { pids: 100, memoryBytes: 256 * MIB },
    // The control raises its own first, as cordon does: what the kernel lets a process do then.
    script:
      '[ -n "$CONTROL" ] && echo 500 > /proc/self/oom_score_adj; echo "adj $(cat /proc/self/oom_score_adj)"; echo 0 2>/dev/null > /proc/self/oom_score_adj && echo BREACH lowered; echo "now $(cat /proc/self/oom_score_adj)"',
  },
  {
    // The bounds hold only while the command cannot leave its cgroups (the host's are root's files).
    name: "leaving the run's cgroups",
    limits: {},
    klass: 'resources',
    control: { pids: 100, memoryBytes: 256 * MIB },
    controlUsers: ['root'],
    script:
      'for c in pids memory cpu; do echo $$ 2>/dev/null > /sys/fs/cgroup/$c/cgroup.procs && echo "BREACH $c"; done; true',
  },
  {
    name: 'more bytes in TMPDIR than limits.tempBytes',
    limits: { tempBytes: 1 * MIB },
    needs: 'tmpfs',
    klass: 'temp',
    control: { pids: 100, memoryBytes: 256 * MIB },
    script: 'head -c 8388608 /dev/zero > "$TMPDIR/fill" && echo BREACH; rm -f "$TMPDIR/fill"',
  },
]
