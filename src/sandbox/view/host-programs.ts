/**
 * Programs the host itself runs or loads, found inside a writable root: cordon's package (its
 * JavaScript, the addon, the cordon-exec helper), the helper wherever it lies, and each runner a
 * probe verdict names (bwrap). A run that rewrote one would run unconfined the next time the host
 * starts a command. The package can stay read-only inside a writable root on a backend that binds
 * it so (bubblewrap's protected binds, Seatbelt's require-not); Landlock cannot, and no backend
 * keeps a writable root itself read-only, nor a runner outside the package.
 */
import type { SandboxCapabilities } from '../../policy/backends.js'
import type { SandboxGrants } from '../../policy/grants.js'
import { canonicalPath } from '../../policy/resolve.js'
import { helperPath } from '../../subprocess/native.js'
import { PACKAGE_ROOT } from './protected-paths.js'
import { within } from './read-view.js'

/** A host program inside a writable root. */
export interface HostProgramInRoot {
  /** The writable root as granted. */
  root: string
  /** The program (or the package dir), canonical. */
  path: string
  what: string
  /** A backend that keeps protected paths read-only can keep this one so too (false: none can). */
  protectable: boolean
}

/** The host's programs, canonical: the package, Node itself, the helper, and every runner `capabilities` names. */
export function hostPrograms(
  capabilities: SandboxCapabilities | undefined,
  packageRoot: string = PACKAGE_ROOT,
): Array<{ path: string; what: string }> {
  const helper = capabilities?.spawnPath?.helper ?? helperPath(packageRoot)
  const runners = Object.values(capabilities?.backends ?? {}).flatMap((c) =>
    c?.executable === undefined ? [] : [{ path: c.executable, what: `the ${c.backend} runner` }],
  )
  return [
    { path: packageRoot, what: "cordon's package" },
    { path: process.execPath, what: 'the Node binary the host runs on' },
    ...(helper === undefined ? [] : [{ path: helper, what: "cordon's helper (cordon-exec)" }]),
    ...runners,
  ].map((p) => ({ ...p, path: canonicalPath(p.path) }))
}

/** Each host program of `programs` that a writable root (workspace or extra) of `grants` holds. */
export function hostProgramsIn(
  grants: SandboxGrants,
  programs: ReadonlyArray<{ path: string; what: string }>,
  packageRoot: string = PACKAGE_ROOT,
): HostProgramInRoot[] {
  const out: HostProgramInRoot[] = []
  // Every writable grant: a cache or temp grant must not hold one either (hostCacheDirs grants around them).
  for (const w of grants.writable) {
    for (const p of programs) {
      if (!within(p.path, w.path)) continue
      // Inside the package (and not the root itself), the package's protected bind covers it.
      // The protected binds cover workspace and extra roots only, never a temp or cache grant.
      const protectable =
        (w.kind === 'root' || w.kind === 'extra') &&
        p.path !== w.path &&
        within(p.path, packageRoot) &&
        packageRoot !== w.path
      out.push({ root: w.path, path: p.path, what: p.what, protectable })
    }
  }
  return out
}
