/**
 * Enforcement, told truthfully: for one backend, host and policy, every effect class the policy
 * promises with how it holds (or why it does not), and the verdict — `full` iff every promised
 * class holds. Pure functions of the probe's facts; the probe's canary checks the same classes
 * on the real kernel before a backend is called usable.
 */
import type { ClassVerdict, EnforcementAccount, SandboxBackendName } from '../../policy/backends.js'
import {
  ALWAYS_PROMISED_CLASSES,
  type ConfinedSandboxMode,
  type EffectClass,
  type NetworkPolicy,
  type ResourceLimits,
} from '../../policy/vocabulary.js'

/** What the probe learned about the host, as far as the accounts care. */
export interface BackendFacts {
  /** The Landlock ABI the plan drives (0: none). */
  abi: number
  /** The seccomp program loads. */
  seccomp: boolean
  /** A supervisor outside the sandbox runs every command (cordon-exec). */
  supervisor: boolean
  /** Private namespaces available to a run; `keys`: a mount namespace masking /proc/keys. */
  namespaces: { ipc: boolean; net: boolean; keys?: boolean }
  /** The command runs as uid 0 (RLIMIT_NPROC does not bind it). */
  uid0: boolean
}

/** What the plan found about the policy's hidden and protected paths on this host. */
export interface ShieldFacts {
  /** How many hidden places the policy names (defaults included). */
  hiddenPlaces: number
  /** The hidden paths that exist (canonical; listed on first read, so read it only when needed). */
  hidden: readonly string[]
  /** Hidden places that lie inside a writable grant (canonical). */
  hiddenInWritable: readonly string[]
  /** Protected paths inside writable roots (canonical). */
  protectedInWritable: readonly string[]
}

/** The parts of a policy the accounts read. */
export interface AccountPolicy {
  mode: ConfinedSandboxMode
  network?: NetworkPolicy | undefined
  limits?: ResourceLimits | undefined
  /** Absent: nothing hidden, nothing protected inside a writable root. */
  shield?: ShieldFacts | undefined
}

/**
 * The classes `policy` promises: every confined run's, plus network when denied, resources when
 * limited, secrets when something is hidden, protected when a protected path lies inside a
 * writable root.
 */
export function promisedClasses(policy: AccountPolicy): EffectClass[] {
  const classes: EffectClass[] = [...ALWAYS_PROMISED_CLASSES]
  if (policy.network === 'deny') classes.push('network')
  if (policy.limits !== undefined && Object.values(policy.limits).some((v) => v !== undefined))
    classes.push('resources')
  if ((policy.shield?.hiddenPlaces ?? 0) > 0) classes.push('secrets')
  if ((policy.shield?.protectedInWritable.length ?? 0) > 0) classes.push('protected')
  return classes
}

const BY_PATH =
  'hiding is by path: a hard link or another mount of the same file system elsewhere still shows the content'

const listed = (paths: readonly string[]) =>
  paths.length <= 4 ? paths.join(', ') : `${paths.slice(0, 4).join(', ')} and ${paths.length - 4} more`

const yes = (how: string): ClassVerdict => ({ governed: true, how })
const no = (how: string): ClassVerdict => ({ governed: false, how })

function resourcesVerdict(facts: BackendFacts, limits: ResourceLimits | undefined): ClassVerdict {
  if (limits?.processes !== undefined && facts.uid0) {
    return no('RLIMIT_NPROC does not bind uid 0: the process limit is not enforced for a root command')
  }
  return yes('setrlimit in the command before exec (RLIMIT_NPROC, RLIMIT_AS, RLIMIT_FSIZE as asked)')
}

function account(classes: Partial<Record<EffectClass, ClassVerdict>>, promised: EffectClass[]): EnforcementAccount {
  const governed = promised.filter((c) => classes[c]?.governed === true)
  const ungoverned = promised.filter((c) => classes[c]?.governed !== true)
  const listed: Partial<Record<EffectClass, ClassVerdict>> = {}
  for (const c of promised) listed[c] = classes[c] ?? no('not governed by this backend')
  // network: inherit promises nothing, but what stays reachable is said all the same.
  if (!promised.includes('network') && classes.network) listed.network = classes.network
  // `signals` is the old name of `processes`: listed wherever processes is.
  if (listed.processes) listed.signals = listed.processes
  if (governed.includes('processes')) governed.push('signals')
  return { enforcement: ungoverned.length === 0 ? 'full' : 'partial', classes: listed, governed, ungoverned }
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
  c.metadata =
    policy.mode !== 'read-only'
      ? no(
          'workspace-write: chmod, chown, utime and xattrs outside the writable roots are not Landlock rights (bubblewrap governs them)',
        )
      : seccomp
        ? yes('seccomp refuses chmod, chown, utime, xattrs and inode-changing ioctls')
        : no('seccomp filters do not load: chmod, chown, utime and xattrs are ungoverned')
  if (policy.network !== 'deny') {
    c.network = no(
      'network: inherit: the host network stays reachable, host TCP/UDP services and pathname unix sockets (ssh-agent, docker.sock) included; Landlock has no connect right for unix sockets',
    )
  } else {
    c.network = !seccomp
      ? no('seccomp filters do not load: non-TCP sockets are ungoverned')
      : facts.namespaces.net
        ? yes('a private network namespace holding only loopback; AF_UNIX and AF_VSOCK sockets refused')
        : abi >= 4
          ? yes('seccomp refuses socket() (loopback included: no private namespace here); Landlock refuses TCP')
          : yes('seccomp refuses socket() (loopback included: no private namespace here)')
  }
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
  c.keyrings = !seccomp
    ? no('seccomp filters do not load')
    : facts.namespaces.keys === true
      ? yes('seccomp refuses add_key, request_key and keyctl; /proc/keys reads empty (a private mount namespace)')
      : no(
          "seccomp refuses add_key, request_key and keyctl, but the names and sizes of the user's keys stay listed in /proc/keys (masking it needs a mount namespace: root, or bubblewrap)",
        )
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
  c.resources = resourcesVerdict(facts, policy.limits)
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
    `Landlock cannot make a subpath of a writable root read-only: ${listed(policy.shield?.protectedInWritable ?? [])} (bubblewrap can)`,
  )
  return account(c, promisedClasses(policy))
}

/** The bubblewrap (+ cordon-exec inside: Landlock writes, seccomp) account for one policy. */
export function bubblewrapAccount(facts: BackendFacts, policy: AccountPolicy): EnforcementAccount {
  const { abi, seccomp } = facts
  const c: Partial<Record<EffectClass, ClassVerdict>> = {}
  const layered = abi >= 3
  c.content = layered
    ? yes(
        'read-only binds outside the writable set, plus a Landlock write domain inside (FIFOs, sockets, /proc/self/fd reopens)',
      )
    : no(
        'no Landlock inside bwrap (ABI < 3): writes to existing FIFOs and reopens through /proc/self/fd are ungoverned',
      )
  c.names = yes('read-only binds outside the writable set (EROFS)')
  c.metadata = yes('read-only binds refuse chmod, chown, utime and xattrs outside the writable set')
  c.network =
    policy.network === 'deny'
      ? yes('a private network namespace (--unshare-net) holding only loopback; seccomp refuses socket(AF_UNIX)')
      : no(
          'network: inherit: the host network stays reachable, host TCP/UDP services and pathname unix sockets outside the masked /run, /tmp/.X11-unix, $XDG_RUNTIME_DIR and SSH agent dirs included',
        )
  c.processes = yes('a private pid namespace: host processes cannot be named, signalled or controlled')
  c.ipc = yes('a private IPC namespace (--unshare-ipc)')
  c.keyrings = seccomp
    ? yes('seccomp inside refuses add_key, request_key and keyctl; /proc/keys and /proc/key-users read empty')
    : no('seccomp filters do not load: the host session keyring is reachable')
  c.terminals = seccomp
    ? yes(
        'a fresh /dev with a /dev/pts of its own (no host pty reachable by path; own ptys and TIOCSCTTY on them work); seccomp refuses TIOCSTI and TIOCLINUX',
      )
    : no('seccomp filters do not load: TIOCSTI into an inherited terminal is ungoverned')
  c.lifetime = facts.supervisor
    ? yes('the pid namespace ends with its init (cordon-exec) and bwrap dies with the host')
    : no('the cordon-exec helper is missing')
  c.resources = resourcesVerdict(facts, policy.limits)
  c.secrets = yes(
    `an empty read-only mount over each hidden path, the directories above one inside a writable root bound in place, and inside bwrap the Landlock read view closing them by inode (so a file the host renames over a masked path stays closed; ${BY_PATH})`,
  )
  c.protected = yes(
    'read-only binds over the protected paths (git hooks and config, a worktree .git file, core.hooksPath and included configs, nested checkouts two levels down, the cordon package and its dependencies), the directories above them bound in place; a missing commondir or included config, or a module planted where Node would look for a cordon dependency first (node_modules/node-pty when it is not installed), that appears is taken away once the run ends, and the .bin/cordon link npm makes is made again if the run changed it: until then a host that loads it could load the planted one',
  )
  return account(c, promisedClasses(policy))
}

/** The account of `backend` for `policy`. */
export function accountFor(
  backend: SandboxBackendName,
  facts: BackendFacts,
  policy: AccountPolicy,
): EnforcementAccount {
  return backend === 'landlock' ? landlockAccount(facts, policy) : bubblewrapAccount(facts, policy)
}
