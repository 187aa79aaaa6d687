// The seccomp generator, checked by running its programs in a tiny cBPF interpreter (the subset
// the generator emits) over every interesting syscall, on both architectures.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  AF_UNIX,
  AUDIT_ARCH,
  BPF,
  compileSeccompRules,
  decodeBpf,
  encodeBpf,
  IO_URING_SYSCALLS,
  METADATA_IOCTLS,
  METADATA_SYSCALLS,
  seccompFilterFor,
  seccompRulesFor,
  SYSCALL_NUMBERS,
  X32_SYSCALL_BIT,
  type BpfInstruction,
  type SeccompArch,
  type SeccompPolicy,
} from '../../src/sandbox/seccomp.js'

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

function programFor(policy: SeccompPolicy): BpfInstruction[] {
  return decodeBpf(seccompFilterFor(policy))
}

function verdict(policy: SeccompPolicy, name: keyof (typeof SYSCALL_NUMBERS)['x86_64'], args: bigint[] = []): number {
  const nr = SYSCALL_NUMBERS[policy.arch][name]
  if (nr === undefined) throw new Error(`${name} absent on ${policy.arch}`)
  return interpret(programFor(policy), { nr, arch: AUDIT_ARCH[policy.arch], args })
}

describe('seccomp program generator', () => {
  for (const arch of ARCHES) {
    describe(arch, () => {
      const ro: SeccompPolicy = { arch, mode: 'read-only', network: 'inherit' }
      const ww: SeccompPolicy = { arch, mode: 'workspace-write', network: 'inherit' }
      const roDeny: SeccompPolicy = { arch, mode: 'read-only', network: 'deny' }
      const wwDeny: SeccompPolicy = { arch, mode: 'workspace-write', network: 'deny' }

      it('refuses every metadata syscall that exists on the arch in read-only, allows them in workspace-write', () => {
        for (const name of METADATA_SYSCALLS) {
          if (SYSCALL_NUMBERS[arch][name] === undefined) continue
          expect(verdict(ro, name), name).toBe(EPERM)
          expect(verdict(roDeny, name), name).toBe(EPERM)
          expect(verdict(ww, name), name).toBe(ALLOW)
        }
      })

      it('refuses io_uring in every mode', () => {
        for (const policy of [ro, ww, roDeny, wwDeny]) {
          for (const name of IO_URING_SYSCALLS) expect(verdict(policy, name), `${policy.mode} ${name}`).toBe(EPERM)
        }
      })

      it('refuses the metadata ioctls in read-only only, on the low 32 bits of the command', () => {
        for (const cmd of METADATA_IOCTLS) {
          expect(verdict(ro, 'ioctl', [3n, BigInt(cmd)])).toBe(EPERM)
          expect(verdict(ro, 'ioctl', [3n, (1n << 32n) | BigInt(cmd)])).toBe(EPERM) // high bits are ignored by the kernel
          expect(verdict(ww, 'ioctl', [3n, BigInt(cmd)])).toBe(ALLOW)
        }
        expect(verdict(ro, 'ioctl', [1n, 0x5401n])).toBe(ALLOW) // TCGETS
        expect(verdict(ro, 'ioctl', [1n, 0x80086601n])).toBe(ALLOW) // FS_IOC_GETFLAGS
      })

      it('allows every socket family unless the network is denied, then only AF_UNIX', () => {
        for (const family of [1n, 2n, 10n, 16n, 17n, 40n]) {
          expect(verdict(ro, 'socket', [family, 1n, 0n])).toBe(ALLOW)
          expect(verdict(wwDeny, 'socket', [family, 1n, 0n])).toBe(family === BigInt(AF_UNIX) ? ALLOW : EPERM)
          expect(verdict(roDeny, 'socketpair', [family, 1n, 0n])).toBe(family === BigInt(AF_UNIX) ? ALLOW : EPERM)
        }
        // The family is an int: high garbage does not smuggle AF_INET past the check.
        expect(verdict(wwDeny, 'socket', [(5n << 32n) | 2n, 1n, 0n])).toBe(EPERM)
      })

      it('refuses a foreign architecture for any syscall number', () => {
        const program = programFor(ww)
        for (const foreign of [0x40000003 /* i386 */, arch === 'x86_64' ? AUDIT_ARCH.aarch64 : AUDIT_ARCH.x86_64]) {
          for (const nr of [0, 1, 59, 221, 425]) expect(interpret(program, { nr, arch: foreign })).toBe(EPERM)
        }
      })

      it('allows ordinary syscalls (property: any number not refused is allowed)', () => {
        const program = programFor(roDeny)
        const refused = new Set(
          [...METADATA_SYSCALLS, ...IO_URING_SYSCALLS]
            .map((n) => SYSCALL_NUMBERS[arch][n])
            .filter((n) => n !== undefined),
        )
        const special = new Set([
          SYSCALL_NUMBERS[arch].socket,
          SYSCALL_NUMBERS[arch].socketpair,
          SYSCALL_NUMBERS[arch].ioctl,
        ])
        fc.assert(
          fc.property(fc.integer({ min: 0, max: 1023 }), (nr) => {
            if (special.has(nr)) return
            const want = refused.has(nr) ? EPERM : ALLOW
            expect(interpret(program, { nr, arch: AUDIT_ARCH[arch], args: [2n, 1n] })).toBe(want)
          }),
        )
      })

      it('stays short (the kernel JIT-compiles it on every spawn)', () => {
        for (const policy of [ro, ww, roDeny, wwDeny]) expect(programFor(policy).length).toBeLessThanOrEqual(48)
      })
    })
  }

  it('refuses x32 syscall numbers on x86_64', () => {
    const program = programFor({ arch: 'x86_64', mode: 'workspace-write', network: 'inherit' })
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
      refuse: ['landlock_create_ruleset', 'landlock_add_rule', 'landlock_restrict_self'],
      errno: 38,
    })
    expect(interpret(program, { nr: 444, arch: AUDIT_ARCH.x86_64 })).toBe(BPF.SECCOMP_RET_ERRNO | 38)
    expect(interpret(program, { nr: 0, arch: AUDIT_ARCH.x86_64 })).toBe(ALLOW)
  })

  it('builds rules from the policy', () => {
    expect(seccompRulesFor({ arch: 'x86_64', mode: 'workspace-write', network: 'inherit' })).toMatchObject({
      refuse: IO_URING_SYSCALLS,
      socketFamilies: undefined,
      ioctlCommands: undefined,
    })
    expect(seccompRulesFor({ arch: 'aarch64', mode: 'read-only', network: 'deny' }).socketFamilies).toEqual([AF_UNIX])
  })
})
