/**
 * The probe's verdict cached on disk, so a CLI start does not run the canaries again (they cost
 * tens of milliseconds, bubblewrap's most). The verdict is only as good as the host it was proved
 * on, so the key holds everything that could change it: kernel release and boot id, uid and gid,
 * cordon's version and the addon's and helper's files (inode, size, mtime), the configured bwrap
 * or each one on the trusted search path, the spawn path, the chain, and the user-namespace, AppArmor and LSM settings. The
 * file lives in cordon's private dir (mode 0600, never shown to a confined command); a file that
 * is not ours, not private, unreadable or malformed is ignored, and `--reprobe` rewrites it. What
 * it names that the host will run is revalidated on every read (src/sandbox/probe/cached-programs.ts).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { SandboxBackendName, SandboxCapabilities } from '../../policy/backends.js'
import { helperPath, loadNative, packageRoot } from '../../subprocess/native.js'
import { privateParent } from '../../subprocess/private-dirs/layout.js'
import { TRUSTED_SEARCH_PATH } from '../../subprocess/trusted-program.js'
import { cachedVerdictProblem, programIdentities } from './cached-programs.js'

const SETTINGS = [
  '/proc/sys/kernel/random/boot_id',
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
  '/proc/sys/kernel/seccomp/actions_avail',
  '/sys/kernel/security/lsm',
]

function read(p: string): string {
  try {
    return fs.readFileSync(p, 'latin1').trim()
  } catch {
    return '-'
  }
}

function identity(p: string | undefined): string {
  if (p === undefined) return '-'
  try {
    const st = fs.statSync(p)
    return `${p}:${st.ino}:${st.size}:${st.mtimeMs}`
  } catch {
    return `${p}:missing`
  }
}

/** The configured bwrap, else every bwrap on the trusted search path, by identity (a new or replaced one changes the key). */
function bwraps(configured: string | undefined): string[] {
  return (configured === undefined ? TRUSTED_SEARCH_PATH.map((d) => path.join(d, 'bwrap')) : [configured])
    .filter((p) => fs.existsSync(p))
    .map(identity)
}

/** The cache key of one probe on this host. */
export function probeCacheKey(
  chain: readonly SandboxBackendName[],
  bwrap: string | undefined,
  spawnPath: string,
): string {
  const version = read(path.join(packageRoot, 'package.json')).match(/"version":\s*"([^"]+)"/)?.[1] ?? '-'
  const parts = [
    `chain=${chain.join(',')}`,
    `spawn=${spawnPath}`,
    `kernel=${os.release()}`,
    `uid=${process.getuid?.()}:${process.getgid?.()}`,
    `cordon=${version}`,
    `addon=${identity(path.join(packageRoot, 'build', 'Release', 'cordon.node'))}`,
    `helper=${identity(helperPath())}`,
    `bwrap=${bwraps(bwrap).join(',')}`,
    ...SETTINGS.map((p) => `${p}=${read(p)}`),
  ]
  // The key itself, not a hash of it: node:crypto would cost a CLI start ~2 ms.
  return parts.join('\n')
}

function cacheFile(): string {
  return path.join(privateParent(), `probe-${process.getuid?.() ?? 'user'}.json`)
}

/** The kernel's Landlock ABI (through the addon), or undefined when it cannot be asked. */
function kernelLandlockAbi(): number | undefined {
  try {
    const abi = loadNative().landlockAbi()
    return abi >= 0 ? abi : undefined
  } catch {
    return undefined
  }
}

/**
 * The cached verdict for `key`, or undefined (absent, stale, not ours, malformed, or naming a
 * program that is not the trusted file recorded, or a Landlock ABI that is not the kernel's).
 */
export function readProbeCache(key: string): SandboxCapabilities | undefined {
  let text: string
  try {
    const file = cacheFile()
    const st = fs.lstatSync(file)
    const uid = process.getuid?.()
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) return undefined
    text = fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  try {
    const entry = JSON.parse(text) as { key?: unknown; capabilities?: unknown; programs?: unknown }
    if (entry.key !== key) return undefined
    const caps = entry.capabilities as SandboxCapabilities
    if (typeof caps !== 'object' || caps === null || !Array.isArray(caps.chain) || typeof caps.backends !== 'object')
      return undefined
    // Every program it names must still be the trusted file probed, its ABI the kernel's.
    return cachedVerdictProblem(caps, entry.programs, kernelLandlockAbi) === undefined ? caps : undefined
  } catch {
    return undefined
  }
}

/** Writes the verdict for `key` (atomically, mode 0600); a failure to write is not an error. */
export function writeProbeCache(key: string, capabilities: SandboxCapabilities): void {
  try {
    const programs = programIdentities(capabilities)
    if (programs === undefined) return // a program it names is not trusted: never cached
    const file = cacheFile()
    const temp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temp, JSON.stringify({ key, capabilities, programs }), { mode: 0o600, flag: 'w' })
    fs.renameSync(temp, file)
  } catch {
    // No private dir, or a full disk: the next start probes again.
  }
}
