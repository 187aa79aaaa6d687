/**
 * The host directories whose unix sockets a bubblewrap run cannot reach: a pathname socket of a
 * host service (ssh-agent, docker.sock, D-Bus, systemd) is a way out of any sandbox, and neither
 * Landlock (no connect right in ABI 7) nor seccomp (it cannot read the address) can refuse a
 * connect by path. An empty tmpfs goes over `/run` (and so `/var/run`), `/tmp/.X11-unix`,
 * `$XDG_RUNTIME_DIR`, the SSH agent socket's directory and every tmux server's (`/tmp/tmux-UID`,
 * `$TMUX_TMPDIR/tmux-UID`, `$TMUX`'s: a host server runs what a client asks, outside). What the policy allows
 * (`allowUnixSockets`), and the files of `/etc` that resolve under a mask (resolv.conf on a
 * systemd-resolved host), are bound back read-only.
 */
import fs from 'node:fs'
import path from 'node:path'
import { canonicalPath } from '../../policy/resolve.js'
import { within } from './read-view.js'

/** Files under `/etc` a command may need that are often symlinks into `/run`. */
const ETC_THROUGH_RUN = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/machine-id', '/etc/mtab']

/** The masks and the paths bound back beneath them. */
export interface SocketMasks {
  masks: string[]
  keep: string[]
}

function isDirectory(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

/** The host's tmux server dirs: `tmux-UID` under /tmp and `$TMUX_TMPDIR`, and the dir of `$TMUX`'s socket. */
function tmuxSocketDirs(env: NodeJS.ProcessEnv): string[] {
  const dirs: string[] = []
  for (const parent of new Set(['/tmp', env.TMUX_TMPDIR ?? '/tmp'])) {
    if (!path.isAbsolute(parent)) continue
    try {
      for (const name of fs.readdirSync(parent)) if (/^tmux-\d+$/.test(name)) dirs.push(path.join(parent, name))
    } catch {
      // an unreadable or missing parent has no server of ours to reach
    }
  }
  const socket = env.TMUX?.split(',')[0]
  if (socket && path.isAbsolute(socket)) dirs.push(path.dirname(socket))
  return dirs
}

/** The socket masks for this host's environment, and what `allow` keeps reachable under them. */
export function socketMasksFor(allow: readonly string[], env: NodeJS.ProcessEnv = process.env): SocketMasks {
  const wanted = ['/run', '/var/run', '/tmp/.X11-unix']
  if (env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR)) wanted.push(env.XDG_RUNTIME_DIR)
  if (env.SSH_AUTH_SOCK && path.isAbsolute(env.SSH_AUTH_SOCK)) wanted.push(path.dirname(env.SSH_AUTH_SOCK))
  wanted.push(...tmuxSocketDirs(env))
  const masks: string[] = []
  for (const dir of wanted.map(canonicalPath)) {
    if (dir === '/' || dir === '/tmp' || !isDirectory(dir)) continue
    if (masks.some((m) => within(dir, m))) continue
    for (let i = masks.length - 1; i >= 0; i--) if (within(masks[i] as string, dir)) masks.splice(i, 1)
    masks.push(dir)
  }
  const keep = new Set<string>()
  for (const p of [...allow, ...ETC_THROUGH_RUN]) {
    const real = canonicalPath(p)
    if (!fs.existsSync(real)) continue
    if (masks.some((m) => within(real, m) && real !== m)) keep.add(real)
  }
  return { masks, keep: [...keep] }
}
