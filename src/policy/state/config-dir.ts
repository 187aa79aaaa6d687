/**
 * cordon's user configuration directory: `$XDG_CONFIG_HOME/cordon`, else `~/.config/cordon`. No
 * file is read from it yet; it is named here, in one place, because a confined command must never
 * be able to write it (src/sandbox/view/own-state.ts refuses a writable root that holds it).
 */
import os from 'node:os'
import path from 'node:path'

/** The user's cordon configuration directory (absolute), or undefined when there is no home to put it in. */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env, home?: string): string | undefined {
  if (home === undefined && env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME))
    return path.join(env.XDG_CONFIG_HOME, 'cordon')
  const base = home ?? env.HOME ?? os.homedir()
  if (!base || !path.isAbsolute(base) || base === '/') return undefined
  return path.join(base, '.config', 'cordon')
}
