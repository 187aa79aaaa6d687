/**
 * Every file the host reads, in one table: the ones it takes a decision from (how to confine,
 * what to run, whom as), each with why the host can trust it, and the reads nothing rides on
 * (the kernel's /proc, a write-only open), each with why. A run that could write a decision's
 * file could weaken a later run: the probe cache and the package live where no writable root
 * reaches (src/sandbox/view/own-state.ts, src/sandbox/view/host-programs.ts). The repository
 * holds src/ to this table: test/unit/policy/state/host-reads.test.ts fails on a module that
 * reads a file and is not listed, and on a listed module that no longer reads one.
 */

/** One module's file reads. */
export interface HostRead {
  /** The module that reads (repository-relative). */
  readonly module: string
  /** What it reads. */
  readonly reads: string
  /** What the host decides from it; absent: nothing rides on it (then `trust` says why). */
  readonly decides?: string
  /** Why the host may trust what it reads, or why it need not. */
  readonly trust: string
}

const PACKAGE_TRUST =
  "cordon's own package: never writable by a confined run (bubblewrap and Seatbelt bind it read-only inside a writable root; a plan whose root holds it is refused on Landlock)"
const KERNEL = 'the running kernel answers it; no process can write it'

/** The table. */
export const HOST_READS: readonly HostRead[] = [
  {
    module: 'src/sandbox/probe/disk-cache.ts',
    reads: 'probe-<uid>.json in the private parent; the kernel settings, package.json and file identities of its key',
    decides: 'which backends are usable, the Landlock ABI driven, the runner and helper programs run',
    trust:
      'the private parent (0700, ours) never lies in, holds or contains a writable root; the file must be ours and 0600; each program it names is revalidated by identity and the ABI against the kernel on every read (src/sandbox/probe/cached-programs.ts)',
  },
  {
    module: 'src/policy/grants.ts',
    reads: 'profiles/grants.json',
    decides: 'what each mode grants',
    trust: PACKAGE_TRUST,
  },
  {
    module: 'src/policy/profiles/hidden-defaults.ts',
    reads: 'profiles/hidden.json',
    decides: 'what a confined command may not read',
    trust: PACKAGE_TRUST,
  },
  {
    module: 'src/policy/profiles/protected-defaults.ts',
    reads: 'profiles/protected.json',
    decides: 'which files in a writable root stay read-only',
    trust: PACKAGE_TRUST,
  },
  {
    module: 'src/policy/config/read-file.ts',
    reads:
      'the user config ($XDG_CONFIG_HOME or ~/.config/cordon/config.json), the project config (<root>/.cordon.json), --config FILE',
    decides: "a run's default mode, writable roots, hidden and protected paths, network and limits",
    trust:
      "each read bounded (64 KiB), a regular file; the user config and .cordon.json opened O_NOFOLLOW. The user config dir lies in no writable grant (src/sandbox/view/own-state.ts). The project config is the repository's: it may only narrow the layers before it, is protected where a backend can, and a changed one wider than the digest record's is refused. --config FILE is named by the person",
  },
  {
    module: 'src/subprocess/private-dirs/config-record.ts',
    reads: 'config-records/<hash>-<n>.json in the private parent',
    decides: 'whether a project config changed wider since cordon last loaded it',
    trust:
      'the private parent (0700, ours) never lies in, holds or contains a writable root; a record is read only as a 0600 regular file of ours, opened O_NOFOLLOW, written whole by rename',
  },
  {
    module: 'src/sandbox/seatbelt/mach-services.ts',
    reads: 'profiles/seatbelt/mach-services.json',
    decides: 'which Mach services a Seatbelt run may reach',
    trust: PACKAGE_TRUST,
  },
  {
    module: 'src/sandbox/seatbelt/profile.ts',
    reads: 'profiles/seatbelt/*.sb',
    decides: 'the Seatbelt profile',
    trust: PACKAGE_TRUST,
  },
  {
    module: 'src/shell/failure-log.ts',
    reads: "profiles/dir-log.bash; a run's directory log",
    decides: 'the directory log every run gets; where a command ran (reported to the model, never a confinement input)',
    trust: `the log's source: ${PACKAGE_TRUST}. The log is the command's own: opened O_NOFOLLOW|O_NONBLOCK, a regular file of the session only, bounded, parsed as data`,
  },
  {
    module: 'src/sandbox/view/protected-paths.ts',
    reads: "a worktree's .git file, commondir, git configs inside writable roots; the package's package.json",
    decides: 'which paths stay read-only inside a writable root',
    trust:
      "the git files are the workspace's: read at plan time and stamped by inode (a change makes the set stale); under bubblewrap they are bound read-only; package.json: cordon's own package",
  },
  {
    module: 'src/sandbox/run-as.ts',
    reads: '/etc/passwd',
    decides: "whom a root host's command runs as, and that user's home",
    trust: 'a system file owned by root; /etc is never a writable root',
  },
  {
    module: 'src/subprocess/native.ts',
    reads: '/usr/bin/ldd',
    decides: 'glibc or musl: which prebuilt addon to load',
    trust: 'a system file owned by root; /usr/bin is never a writable root',
  },
  {
    module: 'src/subprocess/cgroup/hierarchy.ts',
    reads: "/proc/self/mountinfo, /proc/self/cgroup and memory.limit_in_bytes of the host's own cgroups",
    decides: "where a run's cgroups are made, and the default memory bound",
    trust: `the host's own cgroups: writable by root only, never inside a writable root; ${KERNEL}`,
  },
  {
    module: 'src/subprocess/private-dirs/temp-mount.ts',
    reads: '/proc/self/mountinfo',
    trust: `which mounts a session's TMPDIR holds, to detach them; ${KERNEL}`,
  },
  {
    module: 'src/subprocess/cgroup/leaf.ts',
    reads: "pids.events and memory.failcnt of a run's own cgroups",
    trust: `whether the run met its bounds: reported, never a confinement input; ${KERNEL}`,
  },
  {
    module: 'src/sandbox/bubblewrap/probe.ts',
    reads: '/proc/sys user-namespace switches',
    trust: `only the remedy text a person reads; ${KERNEL}`,
  },
  {
    module: 'src/sandbox/probe/canary.ts',
    reads: '/proc/<pid>/cmdline and stat',
    trust: `finds a canary's leftover processes to end them; ${KERNEL}`,
  },
  {
    module: 'src/cli/main.ts',
    reads: "the package's package.json",
    trust: "only the version `cordon --version` prints; cordon's own package",
  },
  {
    module: 'src/mcp/server.ts',
    reads: "the package's package.json",
    trust: "only the version the MCP server names itself with; cordon's own package",
  },
  {
    module: 'src/subprocess/terminal/session.ts',
    reads: '/proc/<pid>/stat',
    trust: `a terminal's live members; ${KERNEL}`,
  },
  {
    module: 'src/subprocess/terminal/inspect.ts',
    reads: "/proc/<pid>/ stat, syscall, fdinfo and mem of a terminal's processes",
    trust:
      "the terminal's foreground job and whether it waits for input: reported, never a confinement input; the memory is the command's own, read bounded as data",
  },
  {
    module: 'src/subprocess/launcher/launch.ts',
    reads: '/proc/self/fdinfo/<pidfd> of a resident instance supervisor',
    trust: `the supervisor's pid in this namespace (the pidfd came from the supervisor, but its fdinfo is the host's view of it); ${KERNEL}`,
  },
  {
    module: 'src/subprocess/process/group.ts',
    reads: '/proc/<pid>/stat',
    trust: `a process group's members; ${KERNEL}`,
  },
  {
    module: 'src/subprocess/portable/host.ts',
    reads: '/proc/self/status, /proc/sys/kernel/cap_last_cap',
    trust: `this process's capabilities; ${KERNEL}`,
  },
  {
    module: 'src/subprocess/process/must-not-appear.ts',
    reads: 'a directory fd (O_DIRECTORY|O_NOFOLLOW), never file content',
    trust: 'the fd removes a planted path by name; nothing is read from it',
  },
  {
    module: 'src/subprocess/output/spill-file.ts',
    reads: 'nothing: a spill file opened for writing (wx, 0600)',
    trust: 'a write-only open; readers get the bytes from the collector',
  },
]
