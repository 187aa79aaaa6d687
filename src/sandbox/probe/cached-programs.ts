/**
 * What a cached probe verdict may be trusted for once it is read back. The file is the host
 * user's alone, but a verdict names programs the host will run (a runner like bwrap, the
 * cordon-exec helper) and facts that set how hard later runs are confined (the Landlock ABI). So
 * each program it names is recorded at write time by identity (owner, mode, inode, size, mtime,
 * through src/subprocess/trusted-program.ts) and, on read, must still be that very trusted file;
 * the cached Landlock ABI must equal the kernel's. Anything else drops the verdict: the probe
 * runs again.
 */
import type { SandboxCapabilities } from '../../policy/backends.js'
import { checkTrustedProgram, type ProgramIdentity, stillTrusted } from '../../subprocess/trusted-program.js'

/** Every program a verdict names (runners, the helper), each once. */
export function programsNamed(caps: SandboxCapabilities): string[] {
  const runners = Object.values(caps.backends).flatMap((c) => (c?.executable === undefined ? [] : [c.executable]))
  const helper = caps.spawnPath?.helper
  return [...new Set([...runners, ...(helper === undefined ? [] : [helper])])]
}

/** The identity of each program `caps` names, or undefined when one of them is not trusted (then nothing is kept). */
export function programIdentities(caps: SandboxCapabilities): ProgramIdentity[] | undefined {
  const out: ProgramIdentity[] = []
  for (const program of programsNamed(caps)) {
    const trust = checkTrustedProgram(program)
    if (!trust.ok) return undefined
    out.push(trust.identity)
  }
  return out
}

/** Whether `value` looks like a ProgramIdentity (a cache file is data, never assumed). */
function isIdentity(value: unknown): value is ProgramIdentity {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return (
    typeof v.path === 'string' &&
    typeof v.realPath === 'string' &&
    ['dev', 'ino', 'uid', 'mode', 'size', 'mtimeMs', 'ctimeMs'].every((k) => typeof v[k] === 'number')
  )
}

/**
 * Why a verdict read back may not be used (undefined: it may): a program it names that was not
 * recorded, or is no longer the trusted file recorded; a Landlock ABI other than `kernelAbi()`.
 */
export function cachedVerdictProblem(
  caps: SandboxCapabilities,
  recorded: unknown,
  kernelAbi: () => number | undefined,
): string | undefined {
  const identities = Array.isArray(recorded) ? recorded.filter(isIdentity) : []
  for (const program of programsNamed(caps)) {
    const identity = identities.find((i) => i.path === program)
    if (identity === undefined) return `${program} was not recorded`
    if (!stillTrusted(identity)) return `${program} is not the trusted file it was`
  }
  const landlock = caps.backends.landlock
  if (landlock?.usable === true) {
    const abi = kernelAbi()
    if (abi === undefined || landlock.abi !== abi)
      return `the cached Landlock ABI ${landlock.abi} is not the kernel's ${abi}`
  }
  return undefined
}
