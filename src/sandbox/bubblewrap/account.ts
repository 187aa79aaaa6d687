/**
 * What bubblewrap (with cordon-exec's Landlock write domain and seccomp inside) governs of each
 * promised effect class on this host: a pure function of the probe's facts.
 */
import type { ClassVerdict, EnforcementAccount } from '../../policy/backends.js'
import { allowListOf, cutsNetwork, type EffectClass } from '../../policy/vocabulary.js'
import {
  type AccountPolicy,
  accountOf,
  type BackendFacts,
  BY_PATH,
  no,
  promisedClasses,
  limitVerdicts,
  yes,
} from '../confinement/account.js'

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
  c.metadata = yes(
    `read-only binds refuse chmod, chown, utime and xattrs outside the writable set (EROFS), the host's device nodes included (the sandbox's init remounts them read-only)${policy.mode === 'read-only' ? "; in the run's own temp dir and /dev/shm they work, as unpacking and cp -a need" : ''}${seccomp ? '; seccomp refuses set-id modes (S_ISUID, S_ISGID) inside it too' : ''}; a terminal the run is handed (its pty, on the host's devpts) keeps its own mount, so its mode and times can be changed`,
  )
  c.network = cutsNetwork(policy.network)
    ? yes(
        `a private network namespace (--unshare-net) holding only loopback${allowListOf(policy.network) ? " and the proxy's listener" : ''}; seccomp refuses socket(AF_UNIX)`,
      )
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
  Object.assign(c, limitVerdicts(facts, policy.limits))
  c.secrets = yes(
    `an empty read-only mount over each hidden path, the directories above one inside a writable root bound in place, and inside bwrap the Landlock read view closing them by inode (so a file the host renames over a masked path stays closed; ${BY_PATH})`,
  )
  c.protected = yes(
    'read-only binds over the protected paths (git hooks and config, a worktree .git file, core.hooksPath and included configs, nested checkouts two levels down, the cordon package and its dependencies, the editor, agent and shell files of profiles/protected.json), the directories above them bound in place; a missing commondir, included config, default or policy-named protected path, or a module planted where Node would look for a cordon dependency first (node_modules/node-pty when it is not installed), that appears is taken away once the run ends, and the .bin/cordon link npm makes, like a symlink on the way from a writable root to a protected path (the bind lands on its target; the link itself stays writable during the run), is made again if the run changed it, what took its place moved aside: until then a host that loads it could load the planted one',
  )
  return accountOf(c, promisedClasses(policy))
}
