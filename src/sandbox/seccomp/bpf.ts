/**
 * The seccomp program a confined command loads last, as a pure function: rules in, a classic BPF
 * program out (`struct sock_filter { u16 code; u8 jt; u8 jf; u32 k }`, little-endian, 8 bytes per
 * instruction), ready for `seccomp(SECCOMP_SET_MODE_FILTER)`. Which rules a plan needs is decided
 * in rules.ts; this file only knows syscall numbers and how to lay a program out.
 *
 * Layout: check the architecture (a foreign one, and x32 numbers on x86_64, are refused), then one
 * `jeq nr` per ruled syscall, then ALLOW (the default: Landlock, not seccomp, is the allow-list),
 * then the argument blocks, then a shared ALLOW and EPERM they jump forward to.
 * A ruled syscall either jumps straight to the shared EPERM return, or into a block that looks at
 * its arguments (low 32 bits, as the kernel truncates pid_t, int and unsigned int arguments) and
 * ends in ALLOW or EPERM. The kernel JIT-compiles the program on every attach: length is cost.
 */

/** The architectures cordon has syscall tables for. */
export type SeccompArch = 'x86_64' | 'aarch64'

/** AUDIT_ARCH_* values the kernel puts in `seccomp_data.arch`. */
export const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 }

/** x32 syscalls on x86_64 carry this bit in their number. */
export const X32_SYSCALL_BIT = 0x40000000

/** The syscall names a rule may refer to. */
export type SyscallName = keyof (typeof SYSCALL_NUMBERS)['x86_64']

/** Syscall numbers per architecture; a name missing from a table does not exist there (aarch64 has no chmod). */
export const SYSCALL_NUMBERS = {
  x86_64: {
    ioctl: 16,
    inotify_add_watch: 254,
    fanotify_mark: 301,
    fcntl: 72,
    socket: 41,
    socketpair: 53,
    unshare: 272,
    open: 2,
    mkdir: 83,
    creat: 85,
    chmod: 90,
    fchmod: 91,
    mknod: 133,
    openat: 257,
    mkdirat: 258,
    mknodat: 259,
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
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    shmget: 29,
    shmat: 30,
    shmctl: 31,
    semget: 64,
    semop: 65,
    semctl: 66,
    shmdt: 67,
    msgget: 68,
    msgsnd: 69,
    msgrcv: 70,
    msgctl: 71,
    semtimedop: 220,
    mq_open: 240,
    mq_unlink: 241,
    mq_timedsend: 242,
    mq_timedreceive: 243,
    mq_notify: 244,
    mq_getsetattr: 245,
    setpriority: 141,
    sched_setparam: 142,
    sched_setscheduler: 144,
    sched_setaffinity: 203,
    ioprio_set: 251,
    migrate_pages: 256,
    move_pages: 279,
    prlimit64: 302,
    sched_setattr: 314,
    process_madvise: 440,
  },
  aarch64: {
    setxattr: 5,
    lsetxattr: 6,
    fsetxattr: 7,
    removexattr: 14,
    lremovexattr: 15,
    fremovexattr: 16,
    fcntl: 25,
    inotify_add_watch: 27,
    mknodat: 33,
    mkdirat: 34,
    ioctl: 29,
    ioprio_set: 30,
    fchmod: 52,
    fchmodat: 53,
    fchownat: 54,
    fchown: 55,
    openat: 56,
    utimensat: 88,
    sched_setparam: 118,
    sched_setscheduler: 119,
    sched_setaffinity: 122,
    setpriority: 140,
    mq_open: 180,
    mq_unlink: 181,
    mq_timedsend: 182,
    mq_timedreceive: 183,
    mq_notify: 184,
    mq_getsetattr: 185,
    msgget: 186,
    msgctl: 187,
    msgrcv: 188,
    msgsnd: 189,
    semget: 190,
    semctl: 191,
    semtimedop: 192,
    semop: 193,
    shmget: 194,
    shmctl: 195,
    shmat: 196,
    shmdt: 197,
    socket: 198,
    socketpair: 199,
    unshare: 97,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    migrate_pages: 238,
    move_pages: 239,
    prlimit64: 261,
    fanotify_mark: 263,
    sched_setattr: 274,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    process_madvise: 440,
    landlock_create_ruleset: 444,
    landlock_add_rule: 445,
    landlock_restrict_self: 446,
    fchmodat2: 452,
    setxattrat: 463,
    removexattrat: 466,
    file_setattr: 469,
  } as Readonly<Partial<Record<string, number>>>,
} as const

/** EPERM: what a refused call returns. */
export const EPERM = 1

/** BPF opcodes and seccomp return values used by the generator (and the test interpreter). */
export const BPF = {
  LD_W_ABS: 0x20, // BPF_LD | BPF_W | BPF_ABS
  JEQ_K: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
  JGE_K: 0x35, // BPF_JMP | BPF_JGE | BPF_K
  JSET_K: 0x45, // BPF_JMP | BPF_JSET | BPF_K
  JA: 0x05, // BPF_JMP | BPF_JA
  RSH_K: 0x74, // BPF_ALU | BPF_RSH | BPF_K
  AND_K: 0x54, // BPF_ALU | BPF_AND | BPF_K
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

/** A test on one argument's low 32 bits. */
export interface ArgCheck {
  arg: number
  /** The argument must be one of these for the call to pass the check. */
  oneOf: readonly number[]
}

/** A test on the bits of one argument's low 32 bits: it holds when any bit of `anyOf` is set. */
export interface BitCheck {
  arg: number
  anyOf: number
}

/** What happens to one syscall. */
export type SyscallRule =
  /** Refused outright. */
  | { name: SyscallName; refuse: true }
  /** Allowed only when every check holds (e.g. `pid == 0`); refused otherwise. */
  | { name: SyscallName; allowOnly: readonly ArgCheck[] }
  /** Refused when the argument is one of `values`; allowed otherwise. */
  | { name: SyscallName; refuseWhen: ArgCheck }
  /** Refused when every check holds (e.g. O_CREAT in the flags and S_ISUID in the mode); allowed otherwise. */
  | { name: SyscallName; refuseWhenBits: readonly BitCheck[] }
  /** `ioctl`: refused for `commands`; with `inodeFamilies`, also every ioctl of those type bytes that writes or has no direction, except `allowed`. */
  | {
      name: 'ioctl'
      commands: readonly number[]
      inodeFamilies?: readonly number[] | undefined
      allowed?: readonly number[] | undefined
    }

/** The rules of one program. */
export interface SeccompRules {
  arch: SeccompArch
  rules: readonly SyscallRule[]
  /** What refused calls return; default EPERM. */
  errno?: number | undefined
}

const IOC_WRITE = 0x40000000
const IOC_READ = 0x80000000

type Target = 'allow' | 'deny' | 'next' | { label: string }
interface Sym {
  code: number
  k: number
  jt?: Target
  jf?: Target
  label?: string
}

/** The program as instructions: arch check, x32 check, the dispatch on ruled syscalls, their blocks, ALLOW. */
export function compileSeccompRules(rules: SeccompRules): BpfInstruction[] {
  const table = SYSCALL_NUMBERS[rules.arch] as Readonly<Partial<Record<string, number>>>
  const deny = BPF.SECCOMP_RET_ERRNO | ((rules.errno ?? EPERM) & 0xffff)
  const head: Sym[] = [
    { code: BPF.LD_W_ABS, k: SECCOMP_DATA.arch },
    { code: BPF.JEQ_K, k: AUDIT_ARCH[rules.arch], jt: 'next', jf: 'deny' },
    { code: BPF.LD_W_ABS, k: SECCOMP_DATA.nr },
  ]
  if (rules.arch === 'x86_64') head.push({ code: BPF.JGE_K, k: X32_SYSCALL_BIT, jt: 'deny', jf: 'next' })
  const dispatch: Sym[] = []
  const blocks: Sym[] = []
  const seen = new Set<number>()
  const ordered = rules.rules
    .map((rule) => ({ rule, nr: table[rule.name] }))
    .filter((r): r is { rule: SyscallRule; nr: number } => r.nr !== undefined)
    .sort((a, b) => a.nr - b.nr)
  for (const [i, { rule, nr }] of ordered.entries()) {
    if (seen.has(nr)) throw new RangeError(`seccomp: two rules for ${rule.name}`)
    seen.add(nr)
    if ('refuse' in rule) {
      dispatch.push({ code: BPF.JEQ_K, k: nr, jt: 'deny', jf: 'next' })
      continue
    }
    const label = `b${i}`
    dispatch.push({ code: BPF.JEQ_K, k: nr, jt: { label }, jf: 'next' })
    blocks.push(...blockFor(rule, label))
  }
  // cBPF jumps only forward: blocks return through the ALLOW and EPERM at the very end.
  const body: Sym[] = [
    ...head,
    ...dispatch,
    { code: BPF.RET_K, k: BPF.SECCOMP_RET_ALLOW },
    ...blocks,
    { code: BPF.RET_K, k: BPF.SECCOMP_RET_ALLOW, label: 'allow' },
    { code: BPF.RET_K, k: deny, label: 'deny' },
  ]
  return resolve(body)
}

/** The instructions of one argument-checking block, first one labelled. */
function blockFor(rule: Exclude<SyscallRule, { refuse: true }>, label: string): Sym[] {
  const out: Sym[] = []
  const load = (arg: number) => out.push({ code: BPF.LD_W_ABS, k: SECCOMP_DATA.argLow(arg) })
  // `value in oneOf` → `pass`, else → `fail`.
  const test = (values: readonly number[], pass: Target, fail: Target) => {
    values.forEach((v, i) => {
      const last = i === values.length - 1
      out.push({ code: BPF.JEQ_K, k: v >>> 0, jt: pass, jf: last ? fail : 'next' })
    })
  }
  if ('allowOnly' in rule) {
    rule.allowOnly.forEach((check, i) => {
      const start = out.length
      load(check.arg)
      if (i > 0) out[start]!.label = `${label}c${i}`
      const last = i === rule.allowOnly.length - 1
      test(check.oneOf, last ? 'allow' : { label: `${label}c${i + 1}` }, 'deny')
    })
  } else if ('refuseWhen' in rule) {
    load(rule.refuseWhen.arg)
    test(rule.refuseWhen.oneOf, 'deny', 'allow')
  } else if ('refuseWhenBits' in rule) {
    // `jset`: a check that holds falls through to the next one's load; the last one refuses.
    rule.refuseWhenBits.forEach((check, i) => {
      load(check.arg)
      const last = i === rule.refuseWhenBits.length - 1
      out.push({ code: BPF.JSET_K, k: check.anyOf >>> 0, jt: last ? 'deny' : 'next', jf: 'allow' })
    })
  } else {
    load(1)
    for (const cmd of rule.commands) out.push({ code: BPF.JEQ_K, k: cmd >>> 0, jt: 'deny', jf: 'next' })
    for (const cmd of rule.allowed ?? []) out.push({ code: BPF.JEQ_K, k: cmd >>> 0, jt: 'allow', jf: 'next' })
    const families = rule.inodeFamilies ?? []
    if (families.length === 0) {
      out.push({ code: BPF.RET_K, k: BPF.SECCOMP_RET_ALLOW })
    } else {
      const family = `${label}f`
      // A pure read (_IOR) passes; a write (_IOW/_IOWR) or no direction (_IO) is checked by family.
      out.push({ code: BPF.JSET_K, k: IOC_WRITE, jt: { label: family }, jf: 'next' })
      out.push({ code: BPF.JSET_K, k: IOC_READ, jt: 'allow', jf: { label: family } })
      out.push({ code: BPF.RSH_K, k: 8, label: family })
      out.push({ code: BPF.AND_K, k: 0xff })
      test(families, 'deny', 'allow')
    }
  }
  const first = out[0]
  if (first) first.label = label
  return out
}

/** Resolves symbolic targets into relative jumps (each must fit cBPF's 8-bit offsets). */
function resolve(body: Sym[]): BpfInstruction[] {
  const at = new Map<string, number>()
  body.forEach((s, i) => {
    if (s.label !== undefined) at.set(s.label, i)
  })
  const offset = (from: number, target: Target | undefined): number => {
    if (target === undefined || target === 'next') return 0
    const name = typeof target === 'string' ? target : target.label
    const to = at.get(name)
    if (to === undefined) throw new RangeError(`seccomp: unknown label ${name}`)
    const rel = to - from - 1
    if (rel < 0 || rel > 255) throw new RangeError(`seccomp: jump out of range (${rel})`)
    return rel
  }
  return body.map((s, i) => ({ code: s.code, k: s.k >>> 0, jt: offset(i, s.jt), jf: offset(i, s.jf) }))
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
