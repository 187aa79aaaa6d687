/**
 * What Landlock (with seccomp and the supervisor) governs of each promised effect class on this
 * host, and why not where it does not: a pure function of the probe's facts.
 */
import type { ClassVerdict, EnforcementAccount } from '../../policy/backends.js'
import { allowListOf, cutsNetwork, type EffectClass } from '../../policy/vocabulary.js'
import {
  type AccountPolicy,
  accountOf,
  type BackendFacts,
  BY_PATH,
  listed,
  no,
  promisedClasses,
  limitVerdicts,
  yes,
} from '../confinement/account.js'

/**
 * What `network: deny` leaves readable under Landlock: procfs has no per-pid rule (a pid's dir is
 * made when the process is, after the ruleset), and without a pid namespace every host process
 * shows there (bubblewrap's own /proc shows only the sandbox's).
 */
const PROC_NET =
  "/proc/PID/net of any host process (its tcp, udp and unix tables) lists the host's connections and the paths of its listening unix sockets: Landlock cannot close procfs per process (bubblewrap's own /proc can)"

/** The network class: `inherit` promises nothing; `deny` and allow-lists refuse sockets but leave /proc/PID/net. */
function networkVerdict(facts: BackendFacts, policy: AccountPolicy): ClassVerdict {
  if (!cutsNetwork(policy.network))
    return no(
      'network: inherit: the host network stays reachable, host TCP/UDP services and pathname unix sockets (ssh-agent, docker.sock, a host tmux server that runs what a client asks) included; Landlock has no connect right for unix sockets',
    )
  if (!facts.seccomp) return no('seccomp filters do not load: non-TCP sockets are ungoverned')
  if (allowListOf(policy.network) && !facts.namespaces.net)
    return no(
      'a network allow-list needs a private network namespace (its only way out is the proxy), and none can be made here',
    )
  const sockets = facts.namespaces.net
    ? `a private network namespace holding only loopback${allowListOf(policy.network) ? " and the proxy's listener" : ''}; AF_UNIX and AF_VSOCK sockets refused`
    : facts.abi >= 4
      ? 'seccomp refuses socket() (loopback included: no private namespace here); Landlock refuses TCP'
      : 'seccomp refuses socket() (loopback included: no private namespace here)'
  return no(`${sockets}; but ${PROC_NET}`)
}

/**
 * Metadata under read-only: read-only mounts refuse it outside the writable set (a view of the
 * run's own), else seccomp refuses it whole; under workspace-write only set-id modes.
 */
function metadataVerdict(seccomp: boolean, view: boolean, policy: AccountPolicy): ClassVerdict {
  if (policy.mode === 'read-only' && view)
    return seccomp
      ? yes(
          "a mount namespace of the run's own where the host is read-only but for its TMPDIR: chmod, chown, utime and xattrs fail EROFS elsewhere (a host device node handed in as stdio is reopened there); seccomp refuses inode-changing ioctls and set-id modes; a terminal the run is handed (its pty, on the host's devpts) keeps its own mount, so its mode and times can be changed",
        )
      : no('seccomp filters do not load: set-id modes and inode-changing ioctls are ungoverned')
  if (policy.mode === 'read-only')
    return seccomp
      ? yes(
          'seccomp refuses chmod, chown, utime, xattrs and inode-changing ioctls (in TMPDIR too: no mount namespace here)',
        )
      : no('seccomp filters do not load: chmod, chown, utime and xattrs are ungoverned')
  return no(
    `workspace-write: chmod, chown, utime and xattrs outside the writable roots are not Landlock rights (bubblewrap governs them)${seccomp ? '; seccomp refuses set-id modes (S_ISUID, S_ISGID) everywhere' : ''}`,
  )
}

/** Keyrings: seccomp refuses the calls; /proc/keys is masked where the run has a mount namespace. */
function keyringsVerdict(facts: BackendFacts): ClassVerdict {
  if (!facts.seccomp) return no('seccomp filters do not load')
  if (facts.namespaces.keys === true || facts.namespaces.view === true)
    return yes('seccomp refuses add_key, request_key and keyctl; /proc/keys reads empty (a private mount namespace)')
  return no(
    "seccomp refuses add_key, request_key and keyctl, but the names and sizes of the user's keys stay listed in /proc/keys (masking it needs a mount namespace: root, a read-only run's view, or bubblewrap)",
  )
}

/** The Landlock (+ seccomp + supervisor) account for one policy. */
export function landlockAccount(facts: BackendFacts, policy: AccountPolicy): EnforcementAccount {
  const { abi, seccomp } = facts
  const c: Partial<Record<EffectClass, ClassVerdict>> = {}
  c.content =
    abi >= 5
      ? yes('Landlock write, truncate and device-ioctl rights outside the writable set')
      : no(`Landlock ABI ${abi} < 5 leaves truncation or device ioctls ungoverned (Linux 6.7+ has ABI 5)`)
  c.names =
    abi >= 2
      ? yes('Landlock create, remove, rename and link rights outside the writable set')
      : no('Landlock ABI 1 cannot refuse renames and links across directories')
  c.metadata = metadataVerdict(seccomp, facts.namespaces.view === true, policy)
  c.network = networkVerdict(facts, policy)
  c.processes =
    abi >= 6 && seccomp
      ? yes(
          'Landlock scopes refuse signals and ptrace outside the sandbox; seccomp allows prlimit, scheduling and priority only on the caller itself',
        )
      : no(
          abi < 6
            ? `Landlock ABI ${abi} < 6 has no signal scope`
            : 'seccomp filters do not load: prlimit and scheduling of other processes are ungoverned',
        )
  c.ipc = facts.namespaces.ipc
    ? yes('a private IPC namespace (SysV and POSIX message queues of the host are unreachable)')
    : seccomp
      ? yes('seccomp refuses SysV IPC and POSIX message queues')
      : no('no IPC namespace and no seccomp: host SysV IPC and message queues are reachable')
  c.keyrings = keyringsVerdict(facts)
  c.terminals =
    seccomp && abi >= 1
      ? yes(
          'seccomp refuses TIOCSTI, TIOCSCTTY and TIOCLINUX; /dev is readable only for null, zero, full, random, urandom and tty',
        )
      : no('seccomp filters do not load: terminal injection is ungoverned')
  c.lifetime = facts.supervisor
    ? yes(
        'a supervisor outside the sandbox (cordon-exec, a subreaper) ends every descendant with the run and dies with the host',
      )
    : no('the cordon-exec helper is missing: descendants that leave the process group can outlive the run')
  Object.assign(c, limitVerdicts(facts, policy.limits))
  const inWritable = policy.shield?.hiddenInWritable ?? []
  c.secrets =
    inWritable.length > 0
      ? no(`Landlock cannot hide what lies inside a writable root: ${listed(inWritable)} (bubblewrap can)`)
      : policy.mode === 'read-only'
        ? yes(
            `Landlock grants no read right on the hidden paths (their names stay listable, and a name known inside one still answers stat, readlink and getxattr: existence, size, times, link target, extended attributes; ${BY_PATH}); seccomp refuses inotify, fanotify and dnotify watches, which Landlock does not govern`,
          )
        : no(
            'Landlock does not govern inotify, fanotify and dnotify watches, kept under workspace-write for file watchers: a command can watch a hidden directory and learn the names of what is opened or made there, and when (bubblewrap can hide them)',
          )
  c.protected = no(
    `Landlock cannot make a subpath of a writable root read-only: ${listed(policy.shield?.protectedInWritable ?? [])} (bubblewrap can); a missing protected path the run makes is taken away once it is over, and a symlink on the way to one that the run replaced is made again (what took its place moved aside)`,
  )
  return accountOf(c, promisedClasses(policy))
}
