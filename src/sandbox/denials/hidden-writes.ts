/**
 * Refusals at hidden places (the secrets set): a read there is the secrets class, and no writable
 * root would help; a write there (`npm config set` on ~/.npmrc, `ssh-keygen -f ~/.ssh/k`) is a
 * write denial like any other, whose way out names the hidden entry to show as well.
 */
import { existsSync } from 'node:fs'
import { relative, sep } from 'node:path'
import { globMatches, type HiddenPlace, hiddenPlacesFor } from '../../policy/profiles/hidden-defaults.js'
import type { SandboxExecutionPolicy } from '../../policy/vocabulary.js'
import { isWithin, landingPath } from './line-paths.js'

/** Words that say the refused operation changed something (a bare `open` says nothing either way). */
const WRITE_WORDS =
  /\b(writ\w*|sav(e|ed|es|ing)|creat\w*|mkdir|make|lock\w*|renam\w*|mov(e|ed|ing)|remov\w*|unlink\w*|touch|cop(y|ied|ying)|install\w*|truncat\w*|append\w*|symlink|link)\b/i

/**
 * Whether a refusal at `path` was of a write: the message says so (`write` from its shape, EROFS,
 * which only a write gets, or a verb that changes something), or nothing is there to read (a
 * refused open of a missing file can only have been a creation).
 */
export function refusedWrite(path: string, operation: string, write = false): boolean {
  if (write || /read-only file system|\bEROFS\b/i.test(operation)) return true
  if (!existsSync(path)) return true
  // The words of the message, not of the paths it names (a dir called `writes` says nothing).
  const words = operation.replace(/(['"`‘])[^'"`’\n]*['"’]/g, ' ').replace(/(^|[\s(:])[~.]{0,2}\/\S*/g, '$1')
  return WRITE_WORDS.test(words)
}

/** Whether `place` hides `path` (for `only`/`keep` places, by the name of its child on the way). */
function hides(place: HiddenPlace, root: string, path: string): boolean {
  if (!isWithin(path, root)) return false
  if (place.only === undefined && place.keep === undefined) return true
  const child = relative(root, path).split(sep)[0]
  if (child === undefined || child === '') return false
  if (place.only !== undefined) return place.only.some((g) => globMatches(g, child))
  return !(place.keep ?? []).some((g) => globMatches(g, child))
}

/**
 * The default hidden entries (their `--show` names) that hide any of `paths` under `policy`: a
 * write there needs the entry shown as well as a writable root. The caller's own `--hide` paths
 * are left out (dropping the flag is theirs to decide).
 */
export function hiddenEntriesFor(
  policy: Pick<SandboxExecutionPolicy, 'hiddenDefaults' | 'hiddenPaths'>,
  paths: readonly string[],
): string[] {
  let places: HiddenPlace[]
  try {
    places = hiddenPlacesFor(policy)
  } catch {
    return []
  }
  const names = places
    .filter((p) => p.name !== 'policy' && p.name !== 'cordon-private')
    .filter((p) => {
      const root = landingPath(p.path)
      return paths.some((path) => hides(p, root, path))
    })
    .map((p) => p.name)
  return [...new Set(names)]
}
