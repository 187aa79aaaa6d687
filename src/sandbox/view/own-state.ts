/**
 * cordon's own state never lies in a writable root. A run that could write cordon's private
 * parent could rewrite the cached probe verdict (a later run would trust it: run the program it
 * names, drive Landlock at the ABI it says) or plant a parent a later host falls back to; one
 * that could write the user's configuration dir could change what later runs are allowed. So a
 * writable root (the workspace, an extra dir) that equals, contains or lies in any of them is refused
 * with a StateInGrantError before anything is planned, on every backend.
 *
 * Every candidate of the private parent counts, not only the one in use: a host started without
 * `$XDG_RUNTIME_DIR` (cron, ssh) falls back to `~/.cache/cordon`, which a run must not prepare.
 */
import { StateInGrantError } from '../../policy/errors.js'
import type { SandboxGrants } from '../../policy/grants.js'
import { canonicalPath } from '../../policy/resolve.js'
import { userConfigDir } from '../../policy/state/config-dir.js'
import { type PrivateOwner, privateParentCandidates } from '../../subprocess/private-dirs/layout.js'
import { within } from './read-view.js'

/** One place of cordon's state, and why a run must not write it. */
export interface OwnStatePlace {
  path: string
  why: string
}

const PARENT_WHY =
  "it is cordon's private directory, whose cached probe verdict and session dirs decide how later runs are confined"
const CONFIG_WHY = "it is cordon's configuration directory, which later runs read their rules from"

/** The places of cordon's state for the host user (and for `owner`, a command's other user), canonical. */
export function ownStatePlaces(
  env: NodeJS.ProcessEnv = process.env,
  owner?: PrivateOwner,
  parent?: string,
): OwnStatePlace[] {
  const parents = [
    ...(parent === undefined ? [] : [parent]),
    ...privateParentCandidates(env),
    ...(owner === undefined ? [] : privateParentCandidates(env, owner)),
  ]
  const configs = [userConfigDir(env), owner?.home === undefined ? undefined : userConfigDir({}, owner.home)]
  const places = [
    ...parents.map((p) => ({ path: p, why: PARENT_WHY })),
    ...configs.filter((p): p is string => p !== undefined).map((p) => ({ path: p, why: CONFIG_WHY })),
  ]
  const seen = new Set<string>()
  return places
    .map((p) => ({ ...p, path: canonicalPath(p.path) }))
    .filter((p) => !seen.has(p.path) && seen.add(p.path) !== undefined)
}

/** The first writable grant of `grants` that holds or is one of `places` (a root: or lies in one), or undefined. */
export function ownStateInGrants(
  grants: SandboxGrants,
  places: readonly OwnStatePlace[],
): { root: string; place: OwnStatePlace } | undefined {
  for (const w of grants.writable) {
    // Inside a place counts too for a root: one in the parent would open other sessions' dirs. The
    // session's own temp and cache dirs lie in the parent by design: they only must not hold a place.
    const inside = w.kind === 'root' || w.kind === 'extra'
    const place = places.find((p) => within(p.path, w.path) || (inside && within(w.path, p.path)))
    if (place !== undefined) return { root: w.path, place }
  }
  return undefined
}

/** Throws StateInGrantError when a writable root of `grants` equals or contains one of `places`. */
export function checkOwnState(grants: SandboxGrants, places: readonly OwnStatePlace[]): void {
  const found = ownStateInGrants(grants, places)
  if (found !== undefined) throw new StateInGrantError(found.root, found.place.path, found.place.why)
}
