/**
 * The host facts the addon reports (`hostCapabilities()`, `landlockAbi()`), found without it: the
 * capabilities from /proc, the Landlock ABI from the `cordon-exec` helper (a static executable,
 * so it runs where the addon does not load). A sandbox that plans on the portable path reads these.
 */
import { childProcess } from '../lazy-builtins.js'
import { readFileSync } from 'node:fs'
import type { NativeAddon } from '../native.js'

const CAP_SETPCAP = 8

/** The effective capability mask of this process (0 when /proc cannot say). */
function effectiveCapabilities(): bigint {
  try {
    const status = readFileSync('/proc/self/status', 'latin1')
    const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1]
    return hex === undefined ? 0n : BigInt(`0x${hex}`)
  } catch {
    return 0n
  }
}

/** What `native.hostCapabilities()` returns, read from /proc (no capability where /proc cannot say). */
export function portableHostCapabilities(): ReturnType<NativeAddon['hostCapabilities']> {
  const eff = effectiveCapabilities()
  let capLast = 40
  try {
    capLast = Number(readFileSync('/proc/sys/kernel/cap_last_cap', 'latin1').trim()) || 40
  } catch {
    // an old kernel without the file: CAP_CHECKPOINT_RESTORE (40) is the last one Linux 5.9+ knows
  }
  return {
    setpcap: (eff & (1n << BigInt(CAP_SETPCAP))) !== 0n,
    capLast,
  }
}

/** The kernel's Landlock ABI as `helper --landlock-abi` reports it (0: none, or the helper could not say). */
export function helperLandlockAbi(helper: string): number {
  try {
    const out = childProcess().execFileSync(helper, ['--landlock-abi'], {
      encoding: 'latin1',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    const abi = Number(out.trim())
    return Number.isInteger(abi) && abi > 0 ? abi : 0
  } catch {
    return 0
  }
}
