/**
 * Python probes a terminal program runs to find host descriptors: its own fds and those of every
 * process of its session it can read, and landlock_add_rule on every fd it holds.
 */

/**
 * Prints `FDS <pid>:<fd>:<target> … END` for every fd above 2 of every process in the probe's
 * session (its own 0..2 and the listing's own directory fds left out), `<pid>:refused:<errno>`
 * for a process whose fd table it may not read.
 */
export const LIST_SESSION_FDS = `
import os
me = os.getpid(); sid = os.getsid(0); out = []
for p in os.listdir('/proc'):
    if not p.isdigit(): continue
    try:
        if os.getsid(int(p)) != sid: continue
    except OSError:
        continue
    try:
        fds = os.listdir('/proc/%s/fd' % p)
    except OSError as e:
        out.append('%s:refused:%d' % (p, e.errno)); continue
    for f in fds:
        try: t = os.readlink('/proc/%s/fd/%s' % (p, f))
        except OSError as e: t = 'unreadable%d' % e.errno
        if int(p) == me and (int(f) <= 2 or t.startswith('/proc/')): continue
        out.append('%s:%s:%s' % (p, f, t))
print('FDS', ' '.join(out), 'END')
`

/**
 * Adds a rule granting WRITE_FILE, MAKE_REG and TRUNCATE beneath $WIDEN_DIR to every fd it holds
 * above 2 that takes one (a Landlock ruleset): prints `ADDED fd…` or `ADDED none END`.
 */
export const WIDEN_HELD_RULESETS = `
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
target = os.open(os.environ['WIDEN_DIR'], os.O_PATH | os.O_DIRECTORY)
attr = ctypes.create_string_buffer(struct.pack('=Qi', (1 << 1) | (1 << 8) | (1 << 14), target), 12)
added = []
for fd in range(3, 1024):
    if fd == target: continue
    if libc.syscall(445, fd, 1, attr, 0) == 0: added.append(str(fd))
print('ADDED', ' '.join(added) or 'none', 'END')
`

/** The `FDS … END` entries a probe printed (undefined when it printed none). */
export function sessionFds(text: string): string[] | undefined {
  const m = /FDS ?(.*?) END/.exec(text.replace(/\r/g, ''))
  return m ? (m[1] as string).split(' ').filter((s) => s !== '') : undefined
}

/** The fds `WIDEN_HELD_RULESETS` added a rule to (empty: none; undefined: it printed nothing). */
export function widenedFds(text: string): string[] | undefined {
  const m = /ADDED (.*?) END/.exec(text.replace(/\r/g, ''))
  if (!m) return undefined
  return m[1] === 'none' ? [] : (m[1] as string).split(' ')
}
