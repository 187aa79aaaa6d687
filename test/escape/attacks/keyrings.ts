/**
 * Kernel keyrings (issue 10, class 2): the host keys host-fixtures.py puts in the session keyring
 * (SKEY) and the user keyring (UKEY) read, searched, requested and updated from inside, and new
 * keys added to both keyrings. keyutils is not installed here: the syscalls go through ctypes
 * (add_key 248, request_key 249, keyctl 250 on x86_64).
 */
import { type Attack, BOTH, PY_SYSCALL, py } from './attack.js'

const KEY_SPEC_SESSION = -3
const KEY_SPEC_USER = -4
const keys = (body: string) => py(`${PY_SYSCALL}desc=os.environ["KEYDESC"]\n${body}`)
const readKey = (variable: string) =>
  keys(
    `buf=ctypes.create_string_buffer(256)\nn, e = sc(250, 11, int(os.environ["${variable}"]), buf, 256)\nprint("keyctl read", n, e)\nif n > 0 and b"cordon-secret" in buf.raw: print("BREACH")`,
  )
const addKey = (ring: number) =>
  keys(
    `r, e = sc(248, b"user", (desc + "-new").encode(), b"pwned", 5, ctypes.c_int(${ring}))\nprint("add_key", r, e)\nif r >= 0: print("BREACH")`,
  )

/** The keyring attacks. */
export const KEYRING_ATTACKS: readonly Attack[] = [
  { name: 'read the host key in the session keyring', kind: 'keyrings', modes: BOTH, script: readKey('SKEY') },
  { name: 'read the host key in the user keyring', kind: 'keyrings', modes: BOTH, script: readKey('UKEY') },
  {
    name: 'search the session keyring for the host key',
    kind: 'keyrings',
    modes: BOTH,
    script: keys(
      `r, e = sc(250, 10, ctypes.c_int(${KEY_SPEC_SESSION}), b"user", (desc + "-s").encode(), 0)\nprint("keyctl search", r, e)\nif r >= 0: print("BREACH")`,
    ),
  },
  {
    name: 'request_key finds the host key',
    kind: 'keyrings',
    modes: BOTH,
    script: keys(
      'r, e = sc(249, b"user", (desc + "-s").encode(), None, 0)\nprint("request_key", r, e)\nif r >= 0: print("BREACH")',
    ),
  },
  {
    name: 'update the host key in the session keyring',
    kind: 'keyrings',
    modes: BOTH,
    script: keys(
      'r, e = sc(250, 2, int(os.environ["SKEY"]), b"pwned", 5)\nprint("keyctl update", r, e)\nif r == 0: print("BREACH")',
    ),
  },
  { name: 'add_key to the session keyring', kind: 'keyrings', modes: BOTH, script: addKey(KEY_SPEC_SESSION) },
  { name: 'add_key to the user keyring', kind: 'keyrings', modes: BOTH, script: addKey(KEY_SPEC_USER) },
  {
    name: 'the host key names through /proc/keys',
    kind: 'keyrings',
    modes: BOTH,
    script: 'grep "$KEYDESC" /proc/keys && echo BREACH; true',
    // Masking /proc/keys takes a mount namespace: root's launcher has one, bubblewrap and a
    // read-only run's view always; an unprivileged workspace-write Landlock run has none, and its
    // account says so.
    ungovernedFor: { nobody: { class: 'keyrings', how: '/proc/keys', backend: 'landlock', mode: 'workspace-write' } },
  },
]
