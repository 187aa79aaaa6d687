/**
 * How a confined terminal gets its Landlock ruleset: node-pty forks without closing anything, so
 * the ruleset is made inheritable just for that fork and its fd number written into the
 * launcher's argv in place of a placeholder; the host closes its copy right after the fork.
 */
import { SpawnError } from '../../policy/errors.js'
import type { NativeAddon } from '../native.js'
import type { SubprocessTerminalSpawnSpec } from '../types.js'

/** The argv word a confined terminal's `--ruleset-fd` carries until the spawn names the fd. */
export const RULESET_FD_PLACEHOLDER = '@ruleset'

/** A fresh ruleset fd, or a SpawnError at `landlock` when it cannot be built. */
function freshRuleset(ruleset: NonNullable<SubprocessTerminalSpawnSpec['ruleset']>): number {
  try {
    return ruleset.fresh()
  } catch (error) {
    const errno = (error as { errno?: unknown }).errno
    throw new SpawnError({
      stage: 'landlock',
      errno: typeof errno === 'number' ? errno : 22,
      detail: "the terminal's ruleset could not be built",
      cause: error,
    })
  }
}

/**
 * The spec's ruleset, built anew and made inheritable for the next fork (node-pty closes nothing),
 * and the argv naming it; undefined without a ruleset. Refuses (stage landlock) a ruleset whose
 * sandbox is disposed, or an argv that does not ask for it. Each spawn gets its own ruleset
 * object: a descriptor another thread's child inherits in the same instant can reach no ruleset a
 * later run uses.
 */
export function handOverRuleset(
  spec: SubprocessTerminalSpawnSpec,
  native: NativeAddon,
): { fd: number; argv: string[] } | undefined {
  const ruleset = spec.ruleset
  if (ruleset === undefined) return undefined
  const at = spec.argv.findIndex((a, i) => a === RULESET_FD_PLACEHOLDER && spec.argv[i - 1] === '--ruleset-fd')
  if (ruleset.closed || at < 0) {
    throw new SpawnError({
      stage: 'landlock',
      errno: 9, // EBADF
      detail: ruleset.closed
        ? "the terminal's sandbox was disposed: nothing was run"
        : "the terminal's argv does not ask for its ruleset",
    })
  }
  const fd = freshRuleset(ruleset)
  const rc = native.setCloexec(fd, false)
  if (rc !== 0) {
    native.closeFd(fd)
    throw new SpawnError({ stage: 'landlock', errno: -rc, detail: "the terminal's ruleset cannot be handed over" })
  }
  const argv = [...spec.argv]
  argv[at] = String(fd)
  return { fd, argv }
}
