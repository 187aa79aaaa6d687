/**
 * cordon's user configuration: `$XDG_CONFIG_HOME/cordon/config.json`, else
 * `~/.config/cordon/config.json` (read by src/policy/config/load.ts). A confined command must never
 * be able to write it: it decides what later runs may do, so src/sandbox/view/own-state.ts refuses
 * a writable root that is, holds or lies inside its directory.
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

/** The user's cordon configuration file (absolute), or undefined when there is no configuration dir. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = userConfigDir(env)
  return dir === undefined ? undefined : path.join(dir, 'config.json')
}
