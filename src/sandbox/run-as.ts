/**
 * Whom a confined command runs as. A root host (a harness in a container) whose workspace belongs
 * to another uid (a bind-mounted checkout) would leave its command unable to write its own
 * workspace once every capability is gone, and keeping CAP_DAC_OVERRIDE would reopen every user's
 * 0600 files. So under workspace-write such a command runs as the workspace owner's uid and gid
 * (no supplementary groups, no capability): it writes what the owner may write, inside the same
 * confinement. What changes for it: HOME and USER are the owner's (from /etc/passwd; the session
 * TMPDIR when the owner has no home), and what root installed under /root is out of its reach.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { SandboxPolicy } from '../policy/vocabulary.js'

/** The user a command runs as when it is not the host's own. */
export interface RunAs {
  uid: number
  gid: number
  /** The owner's login name, when /etc/passwd names one. */
  name: string | undefined
  /** The owner's home, when /etc/passwd names one that exists. */
  home: string | undefined
}

/** The /etc/passwd entry of `uid`, if any. */
function passwdEntry(uid: number): { name: string; gid: number; home: string } | undefined {
  let text: string
  try {
    text = fs.readFileSync('/etc/passwd', 'utf8')
  } catch {
    return undefined
  }
  for (const line of text.split('\n')) {
    const f = line.split(':')
    if (f.length >= 7 && Number(f[2]) === uid && f[0]) return { name: f[0], gid: Number(f[3]), home: f[5] ?? '' }
  }
  return undefined
}

/** The user `policy`'s command runs as on a host running as `hostUid`, or undefined for the host's own. */
export function runAsFor(policy: SandboxPolicy, hostUid: number | undefined): RunAs | undefined {
  if (hostUid !== 0 || policy.mode !== 'workspace-write' || policy.runAsOwner === false) return undefined
  let st: fs.Stats
  try {
    st = fs.statSync(policy.workspaceRoot)
  } catch {
    return undefined
  }
  if (st.uid === 0) return undefined
  const entry = passwdEntry(st.uid)
  const home = entry && path.isAbsolute(entry.home) && fs.existsSync(entry.home) ? entry.home : undefined
  return { uid: st.uid, gid: entry && Number.isInteger(entry.gid) ? entry.gid : st.gid, name: entry?.name, home }
}

/**
 * Whether `target` can be reached by `who` through the permission bits of its ancestors (search
 * on each directory; ACLs are not read): a mount over a place the user cannot reach is moot, and
 * an unprivileged bwrap could not make it.
 */
export function reachableBy(target: string, who: { uid: number; gid: number }): boolean {
  const parts = target.split('/').filter(Boolean)
  let dir = '/'
  for (let i = 0; i < parts.length; i++) {
    let st: fs.Stats
    try {
      st = fs.statSync(dir)
    } catch {
      return false
    }
    const bits = st.uid === who.uid ? (st.mode >> 6) & 7 : st.gid === who.gid ? (st.mode >> 3) & 7 : st.mode & 7
    if ((bits & 1) === 0) return false
    dir = path.join(dir, parts[i] as string)
  }
  return true
}
