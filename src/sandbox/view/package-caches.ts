/**
 * Where package managers cache under confinement. By default (`cacheRoots: 'confined'`) a
 * workspace-write run's npm, yarn, pip, uv, poetry, Go, ccache, deno, bun and XDG caches
 * point into cordon's confined cache (src/subprocess/private-dirs/layout.ts): shared by this user's
 * confined runs, so installs work out of the box and stay warm, and never read by an unconfined
 * one, so a command cannot poison the caches a later unconfined install trusts. A read-only run
 * caches in its session TMPDIR (cold, private). `cacheRoots: 'host'` grants the host's own cache
 * dirs instead (workspace-write). Cargo is left alone (CARGO_HOME also holds its binaries and
 * credentials), and so is pnpm's store: its only variable, npm_config_store_dir, makes npm warn.
 */
import fs from 'node:fs'
import path from 'node:path'
import { canonicalPath } from '../../policy/resolve.js'
import { within } from './read-view.js'

/** The environment that points each package manager's cache beneath `dir`. */
export function cacheEnvFor(dir: string): Record<string, string> {
  return {
    npm_config_cache: path.join(dir, 'npm'),
    YARN_CACHE_FOLDER: path.join(dir, 'yarn'),
    PIP_CACHE_DIR: path.join(dir, 'pip'),
    UV_CACHE_DIR: path.join(dir, 'uv'),
    POETRY_CACHE_DIR: path.join(dir, 'poetry'),
    XDG_CACHE_HOME: path.join(dir, 'xdg'),
    GOCACHE: path.join(dir, 'go-build'),
    GOMODCACHE: path.join(dir, 'go-mod'),
    CCACHE_DIR: path.join(dir, 'ccache'),
    DENO_DIR: path.join(dir, 'deno'),
    BUN_INSTALL_CACHE_DIR: path.join(dir, 'bun'),
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

/**
 * `dir` as writable cache grants that leave out every place of `avoid`: the dir itself when it
 * holds none, none when it lies in one, else its child dirs, split the same way (files directly
 * in it stay read-only).
 */
function aroundAvoided(dir: string, avoid: readonly string[], depth = 0): string[] {
  if (avoid.some((a) => within(dir, a))) return []
  if (!avoid.some((a) => within(a, dir))) return [dir]
  if (depth >= 8) return []
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  return names
    .map((n) => path.join(dir, n))
    .filter(isDirectory)
    .flatMap((d) => aroundAvoided(d, avoid, depth + 1))
}

/**
 * The host's cache dirs that exist (for `cacheRoots: 'host'`): ~/.npm, each dir of ~/.cache,
 * yarn's, pnpm's, Go's module cache and cargo's registry and git checkouts. None of them holds,
 * is or lies in a place of `avoid` (canonical: cordon's state, the package and the programs the
 * host runs, e.g. an npx-installed cordon in ~/.npm/_npx): a dir holding one is granted around it.
 */
export function hostCacheDirs(home: string | undefined, avoid: readonly string[]): string[] {
  if (home === undefined || !path.isAbsolute(home) || home === '/') return []
  const out = [
    '.npm',
    '.yarn/berry/cache',
    '.local/share/pnpm/store',
    'go/pkg/mod',
    '.cargo/registry',
    '.cargo/git',
  ].map((p) => path.join(home, p))
  const xdg = path.join(home, '.cache')
  try {
    for (const name of fs.readdirSync(xdg)) out.push(path.join(xdg, name))
  } catch {
    // No ~/.cache.
  }
  return out.filter(isDirectory).flatMap((d) => aroundAvoided(canonicalPath(d), avoid))
}
