/** The hidden places of a policy's read view, and the home the password database names. */
import os from 'node:os'
import { hiddenPlacesFor } from '../../policy/profiles/hidden-defaults.js'
import type { SandboxPolicy } from '../../policy/vocabulary.js'
import { type PrivateOwner, privateParent } from '../../subprocess/private-dirs/layout.js'
import { DEV_CLOSED, type ViewPlace } from './read-view.js'

/** The hidden places of a policy's read view: /dev (Landlock's), cordon's private dir, the policy's set, the owner's secrets. */
export function viewPlaces(
  policy: SandboxPolicy,
  env: NodeJS.ProcessEnv,
  owner: PrivateOwner | undefined,
): ViewPlace[] {
  const places: ViewPlace[] = [
    DEV_CLOSED,
    { name: 'cordon-private', path: privateParent(env) },
    ...hiddenPlacesFor(policy, env),
  ]
  // HOME can say anything (even `/`): the password database's home is hidden too.
  const home = passwdHome()
  if (home !== undefined && home !== env.HOME) places.push(...hiddenPlacesFor(policy, { HOME: home }))
  // A command run as the workspace owner reads what the owner may read: hide the owner's secrets too.
  if (owner) {
    places.push({ name: 'cordon-private', path: privateParent(env, owner) })
    if (owner.home) places.push(...hiddenPlacesFor(policy, { HOME: owner.home }))
  }
  return places
}

/** The host user's home from the password database (HOME may say otherwise, even `/`). */
export function passwdHome(): string | undefined {
  try {
    const home = os.userInfo().homedir
    return home && home !== '/' ? home : undefined
  } catch {
    return undefined
  }
}
