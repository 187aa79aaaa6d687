/**
 * The seccomp filter a confined child loads last, as a pure function: policy facts in, a classic
 * BPF program out (`struct sock_filter { u16 code; u8 jt; u8 jf; u32 k }`, little-endian, 8 bytes
 * per instruction), ready for `seccomp(SECCOMP_SET_MODE_FILTER)`.
 *
 * The program is short and linear (the kernel JIT-compiles it on every spawn, so length is cost):
 * check the architecture (a foreign one, and x32 numbers on x86_64, are refused), then special
 * cases that look at an argument (`socket` family, `ioctl` command), then a list of refused
 * numbers. Refused calls return EPERM; everything else is allowed (the default is ALLOW: Landlock,
 * not seccomp, is the allow-list).
 */

/** The architectures cordon has syscall tables for. */
export type SeccompArch = 'x86_64' | 'aarch64'

/** AUDIT_ARCH_* values the kernel puts in `seccomp_data.arch`. */
export const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 }

/** x32 syscalls on x86_64 carry this bit in their number. */
export const X32_SYSCALL_BIT = 0x40000000

/** The syscall names the filter may refer to. */
export type SyscallName =
  | 'chmod'
  | 'fchmod'
  | 'fchmodat'
  | 'fchmodat2'
  | 'chown'
  | 'fchown'
  | 'lchown'
  | 'fchownat'
  | 'utime'
  | 'utimes'
  | 'futimesat'
  | 'utimensat'
  | 'setxattr'
  | 'lsetxattr'
  | 'fsetxattr'
  | 'setxattrat'
  | 'removexattr'
  | 'lremovexattr'
  | 'fremovexattr'
  | 'removexattrat'
  | 'file_setattr'
  | 'io_uring_setup'
  | 'io_uring_enter'
  | 'io_uring_register'
  | 'socket'
  | 'socketpair'
  | 'ioctl'
  | 'landlock_create_ruleset'
  | 'landlock_add_rule'
  | 'landlock_restrict_self'

/** Syscall numbers per architecture; a name missing from a table does not exist there (aarch64 has no chmod). */
export const SYSCALL_NUMBERS: Readonly<Record<SeccompArch, Readonly<Partial<Record<SyscallName, number>>>>> = {
  x86_64: {
    ioctl: 16,
    socket: 41,
    socketpair: 53,
    chmod: 90,
    fchmod: 91,
    chown: 92,
    fchown: 93,
    lchown: 94,
    utime: 132,
    setxattr: 188,
    lsetxattr: 189,
    fsetxattr: 190,
    removexattr: 197,
    lremovexattr: 198,
    fremovexattr: 199,
    utimes: 235,
    fchownat: 260,
    futimesat: 261,
    fchmodat: 268,
    utimensat: 280,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    landlock_create_ruleset: 444,
    landlock_add_rule: 445,
    landlock_restrict_self: 446,
    fchmodat2: 452,
    setxattrat: 463,
    removexattrat: 466,
    file_setattr: 469,
  },
  aarch64: {
    setxattr: 5,
    lsetxattr: 6,
    fsetxattr: 7,
    removexattr: 14,
    lremovexattr: 15,
    fremovexattr: 16,
    ioctl: 29,
    fchmod: 52,
    fchmodat: 53,
    fchownat: 54,
    fchown: 55,
    utimensat: 88,
    socket: 198,
    socketpair: 199,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    landlock_create_ruleset: 444,
    landlock_add_rule: 445,
    landlock_restrict_self: 446,
    fchmodat2: 452,
    setxattrat: 463,
    removexattrat: 466,
    file_setattr: 469,
  },
}

/** The metadata family refused under `read-only`: mode, owner, times, extended attributes. */
export const METADATA_SYSCALLS: readonly SyscallName[] = [
  'chmod',
  'fchmod',
  'fchmodat',
  'fchmodat2',
  'chown',
  'fchown',
  'lchown',
  'fchownat',
  'utime',
  'utimes',
  'futimesat',
  'utimensat',
  'setxattr',
  'lsetxattr',
  'fsetxattr',
  'setxattrat',
  'removexattr',
  'lremovexattr',
  'fremovexattr',
  'removexattrat',
  'file_setattr',
]

/** io_uring is refused always: its operations bypass the syscall filter. */
export const IO_URING_SYSCALLS: readonly SyscallName[] = ['io_uring_setup', 'io_uring_enter', 'io_uring_register']

/** `ioctl` commands that change inode flags or fsxattrs (refused under `read-only`). */
export const METADATA_IOCTLS: readonly number[] = [
  0x40086602, // FS_IOC_SETFLAGS (_IOW('f', 2, long))
  0x40046602, // FS_IOC32_SETFLAGS (_IOW('f', 2, int))
  0x401c5820, // FS_IOC_FSSETXATTR (_IOW('X', 32, struct fsxattr))
]

/** The one socket family left under `network: 'deny'`. */
export const AF_UNIX = 1

/** EPERM: what a refused call returns. */
export const EPERM = 1

/** BPF opcodes and seccomp return values used by the generator (and the test interpreter). */
export const BPF = {
  LD_W_ABS: 0x20, // BPF_LD | BPF_W | BPF_ABS
  JEQ_K: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
  JGE_K: 0x35, // BPF_JMP | BPF_JGE | BPF_K
  JSET_K: 0x45, // BPF_JMP | BPF_JSET | BPF_K
  JA: 0x05, // BPF_JMP | BPF_JA
  RET_K: 0x06, // BPF_RET | BPF_K
  SECCOMP_RET_ALLOW: 0x7fff0000,
  SECCOMP_RET_ERRNO: 0x00050000,
} as const

/** Offsets into `struct seccomp_data` (little-endian: the low word of an argument comes first). */
export const SECCOMP_DATA = { nr: 0, arch: 4, argLow: (i: number) => 16 + 8 * i } as const

/** One cBPF instruction. */
export interface BpfInstruction {
  code: number
  jt: number
  jf: number
  k: number
}

/** What the filter must refuse. */
export interface SeccompRules {
  arch: SeccompArch
  /** Syscalls refused outright with `errno` (names absent on `arch` are skipped). */
  refuse: readonly SyscallName[]
  /** Refuse `socket`/`socketpair` unless the family is one of these (absent: sockets are not filtered). */
  socketFamilies?: readonly number[] | undefined
  /** Refuse `ioctl` with one of these commands (compared on the low 32 bits, as the kernel truncates). */
  ioctlCommands?: readonly number[] | undefined
  /** What refused calls return; default EPERM. */
  errno?: number | undefined
}

/** What a sandbox policy asks the filter for. */
export interface SeccompPolicy {
  arch: SeccompArch
  mode: 'read-only' | 'workspace-write'
  network: 'inherit' | 'deny'
}

/** The rules for a confined mode: io_uring always; the metadata family in `read-only`; non-unix sockets when the network is denied. */
export function seccompRulesFor(policy: SeccompPolicy): SeccompRules {
  const readOnly = policy.mode === 'read-only'
  return {
    arch: policy.arch,
    refuse: [...IO_URING_SYSCALLS, ...(readOnly ? METADATA_SYSCALLS : [])],
    socketFamilies: policy.network === 'deny' ? [AF_UNIX] : undefined,
    ioctlCommands: readOnly ? METADATA_IOCTLS : undefined,
  }
}

/** The program as instructions: arch check, x32 check, argument checks, refused numbers, ALLOW. */
export function compileSeccompRules(rules: SeccompRules): BpfInstruction[] {
  const table = SYSCALL_NUMBERS[rules.arch]
  const deny = BPF.SECCOMP_RET_ERRNO | ((rules.errno ?? EPERM) & 0xffff)
  // Each block is built with symbolic targets 'allow' / 'deny', resolved once the layout is known.
  type Target = 'allow' | 'deny' | 'next'
  interface Sym {
    code: number
    k: number
    jt?: Target
    jf?: Target
  }
  const body: Sym[] = []
  body.push({ code: BPF.LD_W_ABS, k: SECCOMP_DATA.arch })
  body.push({ code: BPF.JEQ_K, k: AUDIT_ARCH[rules.arch], jt: 'next', jf: 'deny' })
  body.push({ code: BPF.LD_W_ABS, k: SECCOMP_DATA.nr })
  if (rules.arch === 'x86_64') body.push({ code: BPF.JGE_K, k: X32_SYSCALL_BIT, jt: 'deny', jf: 'next' })

  // Argument checks: `if (nr == X) { load arg; compare...; reload nr }` laid out inline.
  const argBlocks: Array<{ nr: number; arg: number; values: readonly number[]; denyWhenMatched: boolean }> = []
  if (rules.socketFamilies) {
    for (const name of ['socket', 'socketpair'] as const) {
      const nr = table[name]
      if (nr !== undefined) argBlocks.push({ nr, arg: 0, values: rules.socketFamilies, denyWhenMatched: false })
    }
  }
  if (rules.ioctlCommands && rules.ioctlCommands.length > 0 && table.ioctl !== undefined) {
    argBlocks.push({ nr: table.ioctl, arg: 1, values: rules.ioctlCommands, denyWhenMatched: true })
  }
  const pending: Array<{ at: number; skip: number }> = []
  for (const block of argBlocks) {
    // jeq nr ? fallthrough : skip the block (patched below)
    const jumpAt = body.length
    body.push({ code: BPF.JEQ_K, k: block.nr, jt: 'next' })
    body.push({ code: BPF.LD_W_ABS, k: SECCOMP_DATA.argLow(block.arg) })
    block.values.forEach((value, i) => {
      const last = i === block.values.length - 1
      if (block.denyWhenMatched) body.push({ code: BPF.JEQ_K, k: value >>> 0, jt: 'deny', jf: last ? 'allow' : 'next' })
      else body.push({ code: BPF.JEQ_K, k: value >>> 0, jt: 'allow', jf: last ? 'deny' : 'next' })
    })
    pending.push({ at: jumpAt, skip: body.length - jumpAt - 1 })
  }
  const refused = [...new Set(rules.refuse.map((n) => table[n]).filter((n): n is number => n !== undefined))].sort(
    (a, b) => a - b,
  )
  for (const nr of refused) body.push({ code: BPF.JEQ_K, k: nr, jt: 'deny', jf: 'next' })
  const allowAt = body.length
  body.push({ code: BPF.RET_K, k: BPF.SECCOMP_RET_ALLOW })
  const denyAt = body.length
  body.push({ code: BPF.RET_K, k: deny })

  const offset = (from: number, target: Target | undefined, fallbackSkip = 0): number => {
    if (target === undefined || target === 'next') return fallbackSkip
    const to = target === 'allow' ? allowAt : denyAt
    const rel = to - from - 1
    if (rel < 0 || rel > 255) throw new RangeError(`seccomp: jump out of range (${rel})`)
    return rel
  }
  const program = body.map((s, i) => ({ code: s.code, k: s.k >>> 0, jt: offset(i, s.jt), jf: offset(i, s.jf) }))
  for (const { at, skip } of pending) {
    const insn = program[at]
    if (insn) insn.jf = skip
  }
  return program
}

/** Encodes instructions as the kernel's `struct sock_filter` array. */
export function encodeBpf(program: readonly BpfInstruction[]): Buffer {
  const buffer = Buffer.alloc(program.length * 8)
  program.forEach((insn, i) => {
    buffer.writeUInt16LE(insn.code, i * 8)
    buffer.writeUInt8(insn.jt, i * 8 + 2)
    buffer.writeUInt8(insn.jf, i * 8 + 3)
    buffer.writeUInt32LE(insn.k >>> 0, i * 8 + 4)
  })
  return buffer
}

/** Decodes a `struct sock_filter` array back into instructions. */
export function decodeBpf(buffer: Buffer): BpfInstruction[] {
  const out: BpfInstruction[] = []
  for (let at = 0; at + 8 <= buffer.length; at += 8) {
    out.push({
      code: buffer.readUInt16LE(at),
      jt: buffer.readUInt8(at + 2),
      jf: buffer.readUInt8(at + 3),
      k: buffer.readUInt32LE(at + 4),
    })
  }
  return out
}

/** The host's architecture in seccomp terms, or undefined where cordon has no syscall table. */
export function hostSeccompArch(arch: string = process.arch): SeccompArch | undefined {
  if (arch === 'x64') return 'x86_64'
  if (arch === 'arm64') return 'aarch64'
  return undefined
}

const filterCache = new Map<string, Buffer>()

/** The encoded filter for a confined mode (memoised: it is a pure function of its inputs). */
export function seccompFilterFor(policy: SeccompPolicy): Buffer {
  const key = `${policy.arch}/${policy.mode}/${policy.network}`
  let filter = filterCache.get(key)
  if (!filter) {
    filter = encodeBpf(compileSeccompRules(seccompRulesFor(policy)))
    filterCache.set(key, filter)
  }
  return filter
}

/**
 * The filter loaded before `bwrap` is exec'd (inherited by the sandbox): the architecture check
 * and io_uring only. bwrap itself needs mount, netlink and the metadata calls, and the bubblewrap
 * backend governs metadata and network with its read-only binds and namespaces instead.
 */
export function bubblewrapLauncherFilter(arch: SeccompArch): Buffer {
  const key = `${arch}/bubblewrap`
  let filter = filterCache.get(key)
  if (!filter) {
    filter = encodeBpf(compileSeccompRules({ arch, refuse: IO_URING_SYSCALLS }))
    filterCache.set(key, filter)
  }
  return filter
}
