/**
 * The bubblewrap backend's plan, as a pure function: a policy's grants in, the `bwrap` argv that
 * wraps the command out. Nothing here touches the file system; unit tests pin the exact argv.
 *
 * INVARIANT — the argv is always, in this order (bwrap applies mount operations in argv order,
 * and a later mount shadows an earlier one at the same path or above it):
 *
 *   BWRAP
 *   --die-with-parent [--new-session]          the sandbox dies with the host; the command leads
 *                                              its own session (not for a terminal, whose job
 *                                              control needs the terminal's session)
 *   --unshare-user --disable-userns            own user namespace, and no nested one (a nested
 *                                              user namespace could mount over the read-only view)
 *   --unshare-pid --as-pid-1                   own pid namespace: host processes are invisible, so
 *                                              they cannot be signalled or ptraced; its init is
 *                                              cordon-exec (below), and when it exits the kernel
 *                                              kills every descendant
 *   --unshare-ipc                              own IPC namespace: host SysV IPC and message queues
 *                                              are unreachable
 *   [--unshare-net]                            iff network is `deny`: a private network namespace
 *                                              holding only loopback
 *   --cap-drop ALL                             a root caller is not root inside
 *   [--cap-add CAP_SYS_ADMIN                   iff sealDevices: kept for the init alone, which
 *    --cap-add CAP_SETPCAP]                    remounts the host's device binds read-only (below)
 *                                              in a mount namespace of its own and drops them,
 *                                              bounding set included, before anything else
 *   --ro-bind / /                              1. the whole host, read-only (writes fail EROFS)
 *   --dev /dev                                 2. a fresh minimal /dev (null zero full random
 *                                              urandom tty, pts, an empty shm): host /dev/shm is gone
 *   --proc /proc                               3. a procfs of the new pid namespace
 *   the layered mounts, parents before       4. every mount below, ordered by the depth of its
 *   children (a mount shadows what lies          path (a deeper one after a shallower one), at one
 *   beneath it), at one depth in this order:     depth in the order listed here:
 *     --bind P P        each writable grant      workspace root, extra roots, the session temp dir,
 *                       (rank 0)                 the caches; the session's shm dir at /dev/shm
 *     --bind A A        each anchor (rank 1)     directories between a writable root and a
 *                                                protected or hidden path: mount points cannot be
 *                                                renamed, so the path cannot be moved away
 *     --tmpfs D         each socket mask (2)     /run, /tmp/.X11-unix, $XDG_RUNTIME_DIR, the
 *                                                SSH agent's dir: host unix sockets unreachable
 *     [--perms M] --tmpfs D / --ro-bind EMPTY F  each hidden dir / file (3): empty, read-only; a
 *                                                hidden path's parent becomes a "shell", a tmpfs
 *                                                with the parent's mode
 *     --ro-bind-try P P / --bind-try P P /       each other child of a shell (4), bound back
 *     --symlink T P                              (writable if it was) or recreated as the symlink
 *                                                it was; a rebind yields to any other mount at
 *                                                its path (those say what the path is)
 *     --ro-bind P P     each kept path (4)       kept children of a hidden dir, allowed sockets,
 *                                                the session's spill dir
 *     --ro-bind P P / --tmpfs P                  each protected path (5) (missing hooks dir: empty)
 *     --ro-bind EMPTY F                          /proc/keys and /proc/key-users (hidden files of
 *                                                every plan): key names and sizes are not listed
 *   --remount-ro D      each tmpfs above         5. the masks become read-only, once filled
 *   --remount-ro /dev --remount-ro /proc       6. last mount steps, non-recursive: no new file in
 *                                              /dev (the device binds and the session's /dev/shm
 *                                              stay usable), no
 *                                              write to /proc/sys (a capless root could otherwise
 *                                              set host sysctls) or any other /proc file
 *   [--setenv TMPDIR T]                        iff a temp dir is granted
 *   [--chdir CWD]                              iff a cwd is given (never bwrap's silent fallback)
 *   --json-status-fd 4                         bwrap names the init's pid (the host signals it);
 *                                              not for a terminal, which has no fd but the pty
 *   -- CORDON-EXEC init [--seal-devices]       the command's supervisor inside: it applies the
 *        --status-fd 3 … -- COMMAND...         Landlock write domain (ruleset on fd 5) and the
 *                                              seccomp program to the command it forks, forwards
 *                                              TERM with the grace, and reports the command's
 *                                              real exit or signal on fd 3
 *
 * The device nodes of --dev (null zero full random urandom tty, and console when a terminal is
 * attached) are the host's inodes on read-write binds: a sandbox root that owns them (the host's
 * root) could chmod, utime or setxattr them with no capability at all. bwrap's --remount-ro adds
 * nodev, which breaks them; so the init (`--seal-devices`, native/device-seal.h) remounts each
 * read-only keeping its other flags, and a resident instance's init does the same once
 * (native/zygote.cc:run_instance); a host device node inherited as stdio (the host's /dev/null)
 * is swapped for the sandbox's sealed one. Every other read-write mount here is the writable set:
 * the writable grants, the anchors and rebinds inside them, the session's /dev/shm; the private
 * devpts and the masks' tmpfs are the sandbox's own. What stays on a host mount is a terminal
 * handed in on 0..2 (its pty, on the host's devpts): the account says so.
 *
 * A resident instance (`resident`, resident.ts) differs in four places: no --disable-userns (its
 * init locks user namespaces itself), --cap-add of what its init keeps after --cap-drop ALL, /dev
 * laid out by hand instead of --dev (tmpfs, device binds, links, empty pts and shm: each run mounts
 * its own devpts), and no --setenv, --chdir or --json-status-fd (each request brings its own).
 *
 * The host /tmp and /var/tmp are deliberately NOT covered by a tmpfs: the grant table reads `/`
 * everywhere, so they stay visible and read-only (EROFS), exactly as under Landlock, and a
 * workspace that lives under /tmp stays readable in `read-only`. The session temp dir (under the
 * host /tmp) is bound writable in step 4 and exported as TMPDIR.
 */
import { InvalidRequestError } from '../../policy/errors.js'
import type { SandboxGrants } from '../../policy/grants.js'
import { cutsNetwork, type NetworkPolicy } from '../../policy/vocabulary.js'
import type { BubblewrapMounts } from '../view/mounts.js'
import { depth } from '../view/read-view.js'

export type { BubblewrapMounts } from '../view/mounts.js'

/** What the argv needs besides the grants. */
export interface BubblewrapArgvOptions {
  /** Absolute path of the `bwrap` executable (from the probe). */
  bwrapPath: string
  /** `deny` adds `--unshare-net`. */
  network: NetworkPolicy
  /** The session temp dir, exported as TMPDIR inside (it must also be a writable grant). */
  tempDir?: string | undefined
  /** The working directory inside the sandbox (`--chdir`). */
  cwd?: string | undefined
  /** The command and its arguments (for a confined run: cordon-exec init … -- COMMAND). */
  command: readonly string[]
  /** A terminal's run keeps the terminal's session (no `--new-session`) and has no status fd. */
  terminal?: boolean | undefined
  /** Hidden, protected, masked and kept paths (none when absent). */
  mounts?: BubblewrapMounts | undefined
  /**
   * A resident instance (resident.ts): its init keeps what it needs to give each run namespaces
   * of its own (the capabilities below, no user namespace nested by bwrap, whose /dev would need
   * one: the /dev is laid out here instead, ptys coming from each run's own devpts), and it has
   * no cwd, temp dir or status of its own (each run brings them).
   */
  resident?: boolean | undefined
  /**
   * A per-run sandbox whose command is `cordon-exec init` (never a resident one, whose init seals
   * itself): bwrap keeps SEAL_CAPS for the init, which remounts the host's device binds read-only
   * and then drops every capability before it starts anything (`--seal-devices`).
   */
  sealDevices?: boolean | undefined
}

/** What an instance's init keeps in the sandbox's user namespace: mounts and namespaces, loopback, dropping the bounding set, the user-namespace limit. */
const RESIDENT_CAPS = ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN', 'CAP_SETPCAP', 'CAP_SYS_RESOURCE'] as const

/** What a per-run init keeps until it has sealed the device binds: the remount, dropping the bounding set. */
const SEAL_CAPS = ['CAP_SYS_ADMIN', 'CAP_SETPCAP'] as const

/** The init option that seals the device binds (native/device-seal.h), right after `init`. */
const SEAL_DEVICES_FLAG = '--seal-devices'

/** bwrap's --dev, laid out without the devpts it mounts (each run of an instance mounts its own). */
function residentDev(): string[] {
  const out = ['--tmpfs', '/dev']
  for (const d of ['null', 'zero', 'full', 'random', 'urandom', 'tty']) out.push('--dev-bind', `/dev/${d}`, `/dev/${d}`)
  const links: Array<[string, string]> = [
    ['/proc/self/fd', '/dev/fd'],
    ['/proc/self/fd/0', '/dev/stdin'],
    ['/proc/self/fd/1', '/dev/stdout'],
    ['/proc/self/fd/2', '/dev/stderr'],
    ['/proc/kcore', '/dev/core'],
    ['pts/ptmx', '/dev/ptmx'],
  ]
  for (const [target, link] of links) out.push('--symlink', target, link)
  out.push('--dir', '/dev/pts', '--dir', '/dev/shm')
  return out
}

/** One mount of step 4, with its rank among mounts at the same depth. */
interface Mount {
  path: string
  rank: number
  args: string[]
  tmpfs?: boolean
  /** A child bound back into a shell (it yields to any other mount at its path). */
  rebind?: boolean
}

const NO_MOUNTS = {}
/** Each plan's layered mounts, made once: a plan's grants and mounts never change. */
const layered = new WeakMap<SandboxGrants, WeakMap<object, readonly string[]>>()

/** Step 4's mounts, parents before children, then step 5's remounts (once per grants and mounts). */
function layeredMounts(grants: SandboxGrants, mounts: BubblewrapMounts | undefined): readonly string[] {
  let byMounts = layered.get(grants)
  if (byMounts === undefined) {
    byMounts = new WeakMap()
    layered.set(grants, byMounts)
  }
  let out = byMounts.get(mounts ?? NO_MOUNTS)
  if (out === undefined) {
    out = layMounts(grants, mounts)
    byMounts.set(mounts ?? NO_MOUNTS, out)
  }
  return out
}

function layMounts(grants: SandboxGrants, mounts: BubblewrapMounts | undefined): string[] {
  const list: Mount[] = grants.writable.map((g) => ({ path: g.path, rank: 0, args: ['--bind', g.path, g.path] }))
  if (mounts !== undefined) {
    if (mounts.shm !== undefined) list.push({ path: '/dev/shm', rank: 0, args: ['--bind', mounts.shm, '/dev/shm'] })
    const anchors = new Set([...mounts.protected.parents, ...(mounts.anchors ?? [])])
    for (const p of anchors) list.push({ path: p, rank: 1, args: ['--bind', p, p] })
    for (const d of mounts.socketMasks) list.push({ path: d, rank: 2, args: ['--tmpfs', d], tmpfs: true })
    for (const h of mounts.hidden) {
      if (h.kind === 'dir') {
        const perms = h.mode === undefined ? [] : ['--perms', h.mode.toString(8).padStart(4, '0')]
        list.push({ path: h.path, rank: 3, args: [...perms, '--tmpfs', h.path], tmpfs: true })
      } else if (h.kind === 'file') list.push({ path: h.path, rank: 3, args: ['--ro-bind', mounts.emptyFile, h.path] })
      else if (h.kind === 'symlink')
        list.push({ path: h.path, rank: 4, args: ['--symlink', h.target ?? '', h.path], rebind: true })
      // -try: a child gone since the listing is simply not there (nor was it hidden).
      else
        list.push({
          path: h.path,
          rank: 4,
          args: [h.writable ? '--bind-try' : '--ro-bind-try', h.path, h.path],
          rebind: true,
        })
    }
    for (const k of mounts.keep) list.push({ path: k, rank: 4, args: ['--ro-bind', k, k] })
    for (const p of mounts.protected.paths) {
      if (p.kind === 'missing-dir') list.push({ path: p.path, rank: 5, args: ['--tmpfs', p.path], tmpfs: true })
      else list.push({ path: p.path, rank: 5, args: ['--ro-bind', p.path, p.path] })
    }
  }
  // A child bound back into a hidden dir's shell yields to any other mount at its path (a socket
  // mask, a writable root, a protected path): those say what the path is.
  const claimed = new Set(list.filter((m) => !m.rebind).map((m) => m.path))
  for (let i = list.length - 1; i >= 0; i--) if (list[i]?.rebind && claimed.has(list[i]!.path)) list.splice(i, 1)
  const depths = new Map(list.map((m) => [m, depth(m.path)]))
  list.sort((a, b) => (depths.get(a) as number) - (depths.get(b) as number) || a.rank - b.rank)
  const out = list.flatMap((m) => m.args)
  for (const m of list) if (m.tmpfs) out.push('--remount-ro', m.path)
  return out
}

/** The fds a wrapped run's supervisor uses inside bwrap (the runtime installs them). */
export const WRAPPED_FDS = { status: 3, json: 4, ruleset: 5 } as const

/** The fd a wrapped run's supervisor hands a proxy listener over: right after the ruleset's, or in its place. */
export const wrappedProxyFd = (withRuleset: boolean): number => WRAPPED_FDS.ruleset + (withRuleset ? 1 : 0)

/** The `bwrap` argv that runs `options.command` confined to `grants`, in the invariant's order. */
export function bubblewrapArgv(grants: SandboxGrants, options: BubblewrapArgvOptions): string[] {
  const issues: string[] = []
  if (!grants.confined) issues.push('grants.mode: danger-full-access is never confined')
  if (options.command.length === 0) issues.push('command: empty command')
  if (options.tempDir !== undefined && !grants.writable.some((w) => w.path === options.tempDir)) {
    issues.push(`tempDir: temp dir ${options.tempDir} is not a writable grant`)
  }
  const resident = options.resident === true
  const seal = options.sealDevices === true
  if (seal && (resident || options.command[1] !== 'init'))
    issues.push('sealDevices: only the init of a per-run sandbox (cordon-exec init) seals the device binds')
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: 'bubblewrapArgv' })
  const argv = [options.bwrapPath, '--die-with-parent']
  if (options.terminal !== true) argv.push('--new-session')
  // An instance's init forbids nested user namespaces itself (native/resident.h).
  argv.push('--unshare-user', ...(resident ? [] : ['--disable-userns']), '--unshare-pid', '--as-pid-1', '--unshare-ipc')
  if (cutsNetwork(options.network)) argv.push('--unshare-net')
  const kept = resident ? RESIDENT_CAPS : seal ? SEAL_CAPS : []
  argv.push('--cap-drop', 'ALL', ...kept.flatMap((c) => ['--cap-add', c]))
  argv.push('--ro-bind', '/', '/', ...(resident ? residentDev() : ['--dev', '/dev']), '--proc', '/proc')
  argv.push(...layeredMounts(grants, options.mounts))
  argv.push('--remount-ro', '/dev', '--remount-ro', '/proc')
  if (options.tempDir !== undefined && !resident) argv.push('--setenv', 'TMPDIR', options.tempDir)
  if (options.cwd !== undefined && !resident) argv.push('--chdir', options.cwd)
  // A terminal's bwrap has no fd but the pty (node-pty): its exit status is the only report.
  if (options.terminal !== true && !resident) argv.push('--json-status-fd', String(WRAPPED_FDS.json))
  const [helper, ...rest] = options.command
  argv.push('--', ...(seal ? [helper as string, 'init', SEAL_DEVICES_FLAG, ...rest.slice(1)] : options.command))
  return argv
}
