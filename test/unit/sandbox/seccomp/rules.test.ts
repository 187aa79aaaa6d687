// The seccomp programs, checked by running them in a tiny cBPF interpreter (the subset the
// generator emits) over every interesting syscall and argument, on both architectures, for every
// plan shape: the per-class rules of seccomp-policy.ts and the layout of seccomp.ts.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  AUDIT_ARCH,
  BPF,
  type BpfInstruction,
  compileSeccompRules,
  decodeBpf,
  encodeBpf,
  type SeccompArch,
  SYSCALL_NUMBERS,
  type SyscallName,
  X32_SYSCALL_BIT,
} from '../../../../src/sandbox/seccomp/bpf.js'
import {
  AF,
  F_SETLEASE,
  INODE_IOCTL_ALLOWED,
  INODE_IOCTL_FAMILIES,
  IO_URING_SYSCALLS,
  IPC_SYSCALLS,
  KEYRING_SYSCALLS,
  METADATA_SYSCALLS,
  O_CREATES,
  SETID_MODE_ARGS,
  type SeccompInput,
  seccompProgramFor,
  seccompRulesFor,
  TERMINAL_IOCTLS,
} from '../../../../src/sandbox/seccomp/rules.js'

interface SeccompData {
  nr: number
  arch: number
  args?: bigint[]
}

/** Runs a cBPF seccomp program over one `struct seccomp_data`; returns the filter's verdict. */
function interpret(program: readonly BpfInstruction[], data: SeccompData): number {
  const mem = Buffer.alloc(64)
  mem.writeUInt32LE(data.nr >>> 0, 0)
  mem.writeUInt32LE(data.arch >>> 0, 4)
  for (const [i, a] of (data.args ?? []).entries()) mem.writeBigUInt64LE(BigInt.asUintN(64, a), 16 + 8 * i)
  let acc = 0
  let pc = 0
  for (let steps = 0; steps < 10_000; steps++) {
    const insn = program[pc]
    if (!insn) throw new Error(`pc ${pc} ran off the program`)
    switch (insn.code) {
      case BPF.LD_W_ABS:
        if (insn.k % 4 !== 0 || insn.k + 4 > 64) throw new Error(`bad load offset ${insn.k}`)
        acc = mem.readUInt32LE(insn.k)
        pc += 1
        break
      case BPF.JEQ_K:
        pc += 1 + (acc === insn.k >>> 0 ? insn.jt : insn.jf)
        break
      case BPF.JGE_K:
        pc += 1 + (acc >>> 0 >= insn.k >>> 0 ? insn.jt : insn.jf)
        break
      case BPF.JSET_K:
        pc += 1 + ((acc & insn.k) !== 0 ? insn.jt : insn.jf)
        break
      case BPF.JA:
        pc += 1 + insn.k
        break
      case BPF.RSH_K:
        acc = acc >>> insn.k
        pc += 1
        break
      case BPF.AND_K:
        acc = (acc & insn.k) >>> 0
        pc += 1
        break
      case BPF.RET_K:
        return insn.k >>> 0
      default:
        throw new Error(`unexpected opcode 0x${insn.code.toString(16)}`)
    }
  }
  throw new Error('no return within 10000 steps')
}

const ALLOW = BPF.SECCOMP_RET_ALLOW
const EPERM = BPF.SECCOMP_RET_ERRNO | 1
const ARCHES: SeccompArch[] = ['x86_64', 'aarch64']

function programFor(input: SeccompInput): BpfInstruction[] {
  return decodeBpf(seccompProgramFor(input))
}

function verdict(input: SeccompInput, name: SyscallName, args: bigint[] = []): number {
  const nr = (SYSCALL_NUMBERS[input.arch] as Partial<Record<string, number>>)[name]
  if (nr === undefined) throw new Error(`${name} absent on ${input.arch}`)
  return interpret(programFor(input), { nr, arch: AUDIT_ARCH[input.arch], args })
}

const has = (arch: SeccompArch, name: SyscallName) =>
  (SYSCALL_NUMBERS[arch] as Partial<Record<string, number>>)[name] !== undefined

const base = (arch: SeccompArch): SeccompInput => ({
  arch,
  mode: 'read-only',
  network: 'inherit',
  privateIpc: false,
  privateNet: false,
})

describe('seccomp programs per class', () => {
  for (const arch of ARCHES) {
    describe(arch, () => {
      const ro = base(arch)
      const ww: SeccompInput = { ...ro, mode: 'workspace-write' }
      const bwrap: SeccompInput = { ...ro, privateIpc: true }
      const every = [
        ro,
        ww,
        bwrap,
        { ...ro, network: 'deny' as const },
        { ...ww, network: 'deny' as const, privateNet: true },
      ]

      it('metadata: refused in read-only, allowed in workspace-write', () => {
        for (const name of METADATA_SYSCALLS) {
          if (!has(arch, name)) continue
          expect(verdict(ro, name), name).toBe(EPERM)
          expect(verdict(ww, name), name).toBe(ALLOW)
        }
      })

      it('set-id modes: S_ISUID or S_ISGID in a mode refused in every plan; plain modes allowed', () => {
        for (const input of every) {
          for (const [name, at] of Object.entries(SETID_MODE_ARGS) as [
            SyscallName,
            { mode: number; flags?: number },
          ][]) {
            if (!has(arch, name)) continue
            const whole = input.mode === 'read-only' && METADATA_SYSCALLS.includes(name)
            const call = (mode: number, flags = 0o1101 /* O_WRONLY|O_CREAT|O_TRUNC */) => {
              const args = [3n, 3n, 3n, 3n]
              if (at.flags !== undefined) args[at.flags] = BigInt(flags)
              args[at.mode] = BigInt(mode)
              return verdict(input, name, args)
            }
            for (const mode of [0o4755, 0o2755, 0o6755, 0o4000, 0o2000, 0o104755 /* S_IFREG for mknod */])
              expect(call(mode), `${name} ${mode.toString(8)}`).toBe(EPERM)
            for (const mode of [0o755, 0o644, 0o1777, 0o700, 0o100644])
              expect(call(mode), `${name} ${mode.toString(8)}`).toBe(whole ? EPERM : ALLOW)
            expect(call(Number((7n << 32n) | 0o755n)), `${name} high bits`).toBe(whole ? EPERM : ALLOW)
            if (at.flags === undefined) continue
            // open/openat: the mode counts only when the call makes a file (O_CREAT or O_TMPFILE).
            expect(call(0o4755, 0o2 /* O_RDWR */), `${name} no O_CREAT`).toBe(ALLOW)
            expect(call(0o4755, 0o20200002 /* O_TMPFILE|O_RDWR */), `${name} O_TMPFILE`).toBe(EPERM)
          }
        }
        expect(O_CREATES).toBe(0o20000100)
      })

      it('io_uring and keyrings: refused in every plan', () => {
        for (const input of every) {
          for (const name of [...IO_URING_SYSCALLS, ...KEYRING_SYSCALLS]) expect(verdict(input, name), name).toBe(EPERM)
        }
      })

      it('ipc: refused without a private IPC namespace, allowed with one', () => {
        for (const name of IPC_SYSCALLS) {
          expect(verdict(ro, name), name).toBe(EPERM)
          expect(verdict({ ...ro, privateIpc: true }, name), name).toBe(ALLOW)
        }
      })

      it('processes: prlimit and scheduling only on oneself (pid 0), in a pid namespace too (its pid 1 is a supervisor)', () => {
        for (const name of [
          'prlimit64',
          'sched_setaffinity',
          'sched_setscheduler',
          'sched_setparam',
          'sched_setattr',
          'migrate_pages',
          'move_pages',
        ] as const) {
          expect(verdict(ro, name, [0n]), name).toBe(ALLOW)
          expect(verdict(ro, name, [1234n]), name).toBe(EPERM)
          expect(verdict(ro, name, [1n << 32n]), `${name} high bits`).toBe(ALLOW) // the kernel reads a pid_t
          expect(verdict(bwrap, name, [1n]), name).toBe(EPERM)
        }
        // setpriority(which, who): a process or group of oneself; never PRIO_USER, never another who.
        expect(verdict(ro, 'setpriority', [0n, 0n, 5n])).toBe(ALLOW)
        expect(verdict(ro, 'setpriority', [1n, 0n, 5n])).toBe(ALLOW)
        expect(verdict(ro, 'setpriority', [2n, 0n, 5n])).toBe(EPERM)
        expect(verdict(ro, 'setpriority', [0n, 99n, 5n])).toBe(EPERM)
        expect(verdict(ro, 'ioprio_set', [1n, 0n, 0n])).toBe(ALLOW)
        expect(verdict(ro, 'ioprio_set', [3n, 0n, 0n])).toBe(EPERM)
        expect(verdict(ro, 'ioprio_set', [1n, 7n, 0n])).toBe(EPERM)
      })

      it('terminals: TIOCSTI, TIOCSCTTY and TIOCLINUX refused in every plan; other tty ioctls allowed', () => {
        for (const input of every) {
          for (const cmd of Object.values(TERMINAL_IOCTLS)) {
            expect(verdict(input, 'ioctl', [0n, BigInt(cmd)])).toBe(EPERM)
            expect(verdict(input, 'ioctl', [0n, (7n << 32n) | BigInt(cmd)])).toBe(EPERM) // high bits ignored
          }
          expect(verdict(input, 'ioctl', [1n, 0x5401n])).toBe(ALLOW) // TCGETS
          expect(verdict(input, 'ioctl', [1n, 0x5413n])).toBe(ALLOW) // TIOCGWINSZ
        }
      })

      it('terminals with a /dev/pts of their own (bubblewrap): TIOCSCTTY allowed, TIOCSTI and TIOCLINUX still refused', () => {
        const own = { ...bwrap, privateDevpts: true }
        expect(verdict(own, 'ioctl', [3n, BigInt(TERMINAL_IOCTLS.TIOCSCTTY)])).toBe(ALLOW)
        expect(verdict(own, 'ioctl', [3n, BigInt(TERMINAL_IOCTLS.TIOCSTI)])).toBe(EPERM)
        expect(verdict(own, 'ioctl', [3n, BigInt(TERMINAL_IOCTLS.TIOCLINUX)])).toBe(EPERM)
      })

      it('inode ioctls: every write or no-direction ioctl of the families refused in read-only, queries and clones allowed', () => {
        const families = Object.values(INODE_IOCTL_FAMILIES)
        fc.assert(
          fc.property(
            fc.constantFrom(...families),
            fc.integer({ min: 0, max: 255 }),
            fc.integer({ min: 0, max: 0x3fff }),
            fc.constantFrom(0, 1, 2, 3),
            (type, nr, size, dir) => {
              const cmd = ((dir << 30) | (size << 16) | (type << 8) | nr) >>> 0
              const allowed = Object.values(INODE_IOCTL_ALLOWED).includes(cmd) || dir === 2 // _IOR only
              expect(verdict(ro, 'ioctl', [3n, BigInt(cmd)])).toBe(allowed ? ALLOW : EPERM)
              expect(verdict(ww, 'ioctl', [3n, BigInt(cmd)])).toBe(ALLOW)
            },
          ),
          { numRuns: 300 },
        )
        expect(verdict(ro, 'ioctl', [3n, 0x40087602n])).toBe(EPERM) // FS_IOC_SETVERSION
        expect(verdict(ro, 'ioctl', [3n, 0x40086602n])).toBe(EPERM) // FS_IOC_SETFLAGS
        expect(verdict(ro, 'ioctl', [3n, 0x80086601n])).toBe(ALLOW) // FS_IOC_GETFLAGS
        expect(verdict(ro, 'ioctl', [3n, 0xc020660bn])).toBe(ALLOW) // FS_IOC_FIEMAP
        expect(verdict(ro, 'ioctl', [3n, 0x40049409n])).toBe(ALLOW) // FICLONE
        expect(verdict(ro, 'ioctl', [3n, 0x5421n])).toBe(ALLOW) // FIONBIO ('T')
      })

      it('leases: F_SETLEASE refused, other fcntls allowed', () => {
        for (const input of every) {
          expect(verdict(input, 'fcntl', [3n, BigInt(F_SETLEASE), 0n])).toBe(EPERM)
          expect(verdict(input, 'fcntl', [3n, 1n])).toBe(ALLOW) // F_GETFD
          expect(verdict(input, 'fcntl', [3n, 4n])).toBe(ALLOW) // F_SETFL
        }
      })

      it('network: AF_VSOCK always refused; deny without a namespace refuses socket(); with one only INET, INET6, NETLINK', () => {
        const deny: SeccompInput = { ...ro, network: 'deny' }
        const denyNs: SeccompInput = { ...deny, privateNet: true }
        for (const family of [AF.UNIX, AF.INET, AF.INET6, AF.NETLINK, 17, AF.VSOCK]) {
          const f = BigInt(family)
          expect(verdict(ro, 'socket', [f, 1n, 0n])).toBe(family === AF.VSOCK ? EPERM : ALLOW)
          expect(verdict(deny, 'socket', [f, 1n, 0n])).toBe(EPERM)
          expect(verdict(denyNs, 'socket', [f, 1n, 0n])).toBe(
            [AF.INET, AF.INET6, AF.NETLINK].includes(family as 2) ? ALLOW : EPERM,
          )
          expect(verdict(deny, 'socketpair', [f, 1n, 0n])).toBe(family === AF.UNIX ? ALLOW : EPERM)
        }
        // The family is an int: high garbage does not smuggle AF_INET past the check.
        expect(verdict(denyNs, 'socket', [(5n << 32n) | 2n, 1n, 0n])).toBe(ALLOW)
        expect(verdict(denyNs, 'socket', [(2n << 32n) | 1n, 1n, 0n])).toBe(EPERM)
      })

      it('a foreign architecture is refused for any syscall number', () => {
        const program = programFor(ww)
        for (const foreign of [0x40000003 /* i386 */, arch === 'x86_64' ? AUDIT_ARCH.aarch64 : AUDIT_ARCH.x86_64]) {
          for (const nr of [0, 1, 59, 221, 425]) expect(interpret(program, { nr, arch: foreign })).toBe(EPERM)
        }
      })

      it('ordinary syscalls are allowed (property: a number no rule names is allowed)', () => {
        const input: SeccompInput = { ...ro, network: 'deny' }
        const program = programFor(input)
        const table = SYSCALL_NUMBERS[arch] as Partial<Record<string, number>>
        const ruled = new Set(
          seccompRulesFor(input)
            .rules.map((r) => table[r.name])
            .filter((n) => n !== undefined),
        )
        fc.assert(
          fc.property(fc.integer({ min: 0, max: 1023 }), (nr) => {
            if (ruled.has(nr)) return
            expect(interpret(program, { nr, arch: AUDIT_ARCH[arch], args: [2n, 1n] })).toBe(ALLOW)
          }),
        )
      })

      it('stays within cBPF jump range and short (the kernel JIT-compiles it on every attach)', () => {
        for (const input of every) expect(programFor(input).length).toBeLessThanOrEqual(160)
      })
    })
  }

  it('refuses x32 syscall numbers on x86_64', () => {
    const program = programFor({ ...base('x86_64'), mode: 'workspace-write' })
    for (const nr of [0, 1, 59, 257]) {
      expect(interpret(program, { nr, arch: AUDIT_ARCH.x86_64 })).toBe(ALLOW)
      expect(interpret(program, { nr: nr | X32_SYSCALL_BIT, arch: AUDIT_ARCH.x86_64 })).toBe(EPERM)
    }
  })

  it('encodes sock_filter little-endian, 8 bytes per instruction, and round-trips', () => {
    const program: BpfInstruction[] = [
      { code: 0x20, jt: 0, jf: 0, k: 4 },
      { code: 0x15, jt: 1, jf: 2, k: 0xc000003e },
      { code: 0x06, jt: 0, jf: 0, k: 0x7fff0000 },
    ]
    const buf = encodeBpf(program)
    expect(buf.toString('hex')).toBe('2000000004000000' + '150001023e0000c0' + '060000000000ff7f')
    expect(decodeBpf(buf)).toEqual(program)
  })

  it('can return another errno (the fail-closed harness uses ENOSYS for the Landlock syscalls)', () => {
    const program = compileSeccompRules({
      arch: 'x86_64',
      rules: [{ name: 'landlock_create_ruleset', refuse: true }],
      errno: 38,
    })
    expect(interpret(program, { nr: 444, arch: AUDIT_ARCH.x86_64 })).toBe(BPF.SECCOMP_RET_ERRNO | 38)
    expect(interpret(program, { nr: 0, arch: AUDIT_ARCH.x86_64 })).toBe(ALLOW)
  })

  it('refuseWhenBits: refused only when every check has one of its bits, on the low 32 bits', () => {
    const program = compileSeccompRules({
      arch: 'x86_64',
      rules: [
        {
          name: 'openat',
          refuseWhenBits: [
            { arg: 2, anyOf: 0o100 },
            { arg: 3, anyOf: 0o6000 },
          ],
        },
      ],
    })
    const openat = (flags: bigint, mode: bigint) =>
      interpret(program, { nr: 257, arch: AUDIT_ARCH.x86_64, args: [0n, 0n, flags, mode] })
    expect(openat(0o100n, 0o4755n)).toBe(EPERM)
    expect(openat(0o100n, 0o2000n)).toBe(EPERM)
    expect(openat(0o100n, 0o755n)).toBe(ALLOW)
    expect(openat(0n, 0o4755n)).toBe(ALLOW)
    expect(openat(0o100n, 0o4000n << 32n)).toBe(ALLOW) // the kernel reads a umode_t
    expect(interpret(program, { nr: 2, arch: AUDIT_ARCH.x86_64, args: [0n, 0o100n, 0o4755n] })).toBe(ALLOW)
  })

  it('refuses two rules for one syscall (a plan must say one thing per call)', () => {
    expect(() =>
      compileSeccompRules({
        arch: 'x86_64',
        rules: [
          { name: 'keyctl', refuse: true },
          { name: 'keyctl', refuse: true },
        ],
      }),
    ).toThrow(/two rules/)
  })
})
