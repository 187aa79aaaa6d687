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
 *   --ro-bind / /                              1. the whole host, read-only (writes fail EROFS)
 *   --dev /dev                                 2. a fresh minimal /dev (null zero full random
 *                                              urandom tty, pts, an empty shm): host /dev/shm is gone
 *   --proc /proc                               3. a procfs of the new pid namespace
 *   --bind P P      for each writable grant    4. in grant order: workspace root, extra roots, the
 *                                              session temp dir (after 1–3, so nothing shadows them)
 *   --ro-bind-try P P  for each protected path 5. after 4: read-only again inside a writable root
 *   --remount-ro /dev --remount-ro /proc       6. last mount steps, non-recursive: no new file in
 *                                              /dev or /dev/shm (the device binds stay usable), no
 *                                              write to /proc/sys (a capless root could otherwise
 *                                              set host sysctls) or any other /proc file
 *   [--setenv TMPDIR T]                        iff a temp dir is granted
 *   [--chdir CWD]                              iff a cwd is given (never bwrap's silent fallback)
 *   --json-status-fd 4                         bwrap names the init's pid (the host signals it);
 *                                              not for a terminal, which has no fd but the pty
 *   -- CORDON-EXEC init --status-fd 3 …       the command's supervisor inside: it applies the
 *        -- COMMAND...                         Landlock write domain (ruleset on fd 5) and the
 *                                              seccomp program to the command it forks, forwards
 *                                              TERM with the grace, and reports the command's
 *                                              real exit or signal on fd 3
 *
 * The host /tmp and /var/tmp are deliberately NOT covered by a tmpfs: the grant table reads `/`
 * everywhere, so they stay visible and read-only (EROFS), exactly as under Landlock, and a
 * workspace that lives under /tmp stays readable in `read-only`. The session temp dir (under the
 * host /tmp) is bound writable in step 4 and exported as TMPDIR.
 */
import type { SandboxGrants } from '../policy/grants.js'
import type { NetworkPolicy } from '../policy/vocabulary.js'

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
}

/** The fds a wrapped run's supervisor uses inside bwrap (the runtime installs them). */
export const WRAPPED_FDS = { status: 3, json: 4, ruleset: 5 } as const

/** The `bwrap` argv that runs `options.command` confined to `grants`, in the invariant's order. */
export function bubblewrapArgv(grants: SandboxGrants, options: BubblewrapArgvOptions): string[] {
  if (!grants.confined) throw new Error('bubblewrapArgv: danger-full-access is never confined')
  if (options.command.length === 0) throw new Error('bubblewrapArgv: empty command')
  if (options.tempDir !== undefined && !grants.writable.some((w) => w.path === options.tempDir)) {
    throw new Error(`bubblewrapArgv: temp dir ${options.tempDir} is not a writable grant`)
  }
  const argv = [options.bwrapPath, '--die-with-parent']
  if (options.terminal !== true) argv.push('--new-session')
  argv.push('--unshare-user', '--disable-userns', '--unshare-pid', '--as-pid-1', '--unshare-ipc')
  if (options.network === 'deny') argv.push('--unshare-net')
  argv.push('--cap-drop', 'ALL')
  argv.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc')
  for (const grant of grants.writable) argv.push('--bind', grant.path, grant.path)
  for (const path of grants.protectedPaths) argv.push('--ro-bind-try', path, path)
  argv.push('--remount-ro', '/dev', '--remount-ro', '/proc')
  if (options.tempDir !== undefined) argv.push('--setenv', 'TMPDIR', options.tempDir)
  if (options.cwd !== undefined) argv.push('--chdir', options.cwd)
  // A terminal's bwrap has no fd but the pty (node-pty): its exit status is the only report.
  if (options.terminal !== true) argv.push('--json-status-fd', String(WRAPPED_FDS.json))
  argv.push('--', ...options.command)
  return argv
}
