/**
 * The texts a model reads when a command never started: `spawn failed: <what>` (the reference's
 * exact prefix) and `aborted before spawn: <reason>`. Built from the error's own fields, so a
 * SpawnError reads `spawn failed: chdir: ENOENT (/work/missing)`, never "spawn failed: spawn
 * failed at …".
 */
import { isSpawnError } from '../policy/errors.js'

export { abortedBeforeSpawnText } from '../policy/errors.js'

/** `spawn failed: <stage>: <errno name> (<path>)` for a SpawnError, else `spawn failed: <message>`. */
export function spawnFailureText(error: unknown): string {
  if (isSpawnError(error)) {
    return `spawn failed: ${error.stage}: ${error.code}${error.path === undefined ? '' : ` (${error.path})`}`
  }
  return `spawn failed: ${error instanceof Error ? error.message : String(error)}`
}
