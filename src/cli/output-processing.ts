/**
 * Output processing (OPOST) off on the person's terminal, so the relay is byte-exact (libuv's raw
 * mode keeps ONLCR: the pty's "\r\n" would reach the screen as "\r\r\n"). Without running a
 * program found through PATH, which a confined command could have planted: through the addon's
 * tcsetattr; without the addon, an absolute `stty` that passes checkTrustedProgram; else OPOST
 * stays on and the caller is told so. Turning it back on is libuv's (setRawMode(false) restores
 * the modes it saved).
 */
import { errnoName } from '../policy/errors.js'
import { childProcess } from '../subprocess/lazy-builtins.js'
import { loadNative, type NativeAddon } from '../subprocess/native.js'
import { findTrustedProgram, TRUSTED_SEARCH_PATH } from '../subprocess/trusted-program.js'

/** How OPOST is turned off here (tests choose; default the addon when it loads, else a trusted stty). */
export interface OutputProcessingTools {
  /** The addon, or null for none. */
  native?: NativeAddon | null
  /** Where a trusted `stty` is looked for without the addon; default the trusted search path. */
  sttyDirs?: readonly string[]
}

/** The addon, or undefined where it does not load. */
function addon(tools: OutputProcessingTools): NativeAddon | undefined {
  if (tools.native !== undefined) return tools.native ?? undefined
  try {
    return loadNative()
  } catch {
    return undefined
  }
}

/**
 * Turns output processing off on the terminal at `fd` (stty, on the portable path, acts on fd 0:
 * give 0 there). Returns undefined when it is off, else a one-line notice that it stays on and why.
 */
export function outputProcessingOff(fd: number, tools: OutputProcessingTools = {}): string | undefined {
  const native = addon(tools)
  if (native) {
    const status = native.setOutputProcessing(fd, false)
    return status === 0 ? undefined : `cordon: output processing stays on (tcsetattr: ${errnoName(-status)})`
  }
  const stty = findTrustedProgram('stty', tools.sttyDirs ?? TRUSTED_SEARCH_PATH)
  if (stty.identity === undefined) {
    const refused = stty.refused.map((r) => `${r.path}: ${r.reason}`).join('; ')
    return `cordon: output processing stays on (no addon, and no trusted stty${refused ? `: ${refused}` : ''}): line ends may show doubled`
  }
  const run = childProcess().spawnSync(stty.identity.path, ['-opost'], { stdio: [fd, 'ignore', 'ignore'] })
  return run.status === 0 ? undefined : `cordon: output processing stays on (${stty.identity.path} -opost failed)`
}
