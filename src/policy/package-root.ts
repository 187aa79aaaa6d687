/**
 * The package root (package.json, profiles/, build/), found once from this module's place: src/policy/ and
 * dist/policy/ alike, and the CLI bundle at dist/cli/ (also two folders down). Every other path to a package
 * file is derived from it, so moving a module never changes what it finds.
 */
import { fileURLToPath } from 'node:url'

/** The package root directory, absolute, with no trailing slash. */
export const PACKAGE_ROOT: string = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '')
