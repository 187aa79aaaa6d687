/**
 * The one PATH search of the spawn path: a bare program name is looked up on the child's PATH in
 * the host, synchronously, before anything is spawned (the native child cannot allocate or
 * search, and the launcher must be handed an absolute path). Empty and relative PATH entries are
 * skipped: they would name the child's cwd, a classic trap.
 */
import { accessSync, constants, statSync } from 'node:fs'

/** The PATH a shell would use when the environment has none. */
export const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin'

/** Where a bare name was found: an absolute path, or the errno-name of why not. */
export type ProgramLookup = { path: string } | { error: 'ENOENT' | 'EACCES' }

/** The program `file` as the kernel should exec it: unchanged when it holds a '/', else found on `searchPath`. */
export function findProgram(file: string, searchPath: string = DEFAULT_PATH): ProgramLookup {
  if (file.includes('/')) return { path: file }
  if (file === '') return { error: 'ENOENT' }
  let error: 'ENOENT' | 'EACCES' = 'ENOENT'
  for (const dir of searchPath.split(':')) {
    if (!dir.startsWith('/')) continue
    const candidate = dir.endsWith('/') ? `${dir}${file}` : `${dir}/${file}`
    try {
      if (!statSync(candidate).isFile()) continue
    } catch {
      continue
    }
    try {
      accessSync(candidate, constants.X_OK)
      return { path: candidate }
    } catch {
      error = 'EACCES'
    }
  }
  return { error }
}

/** The PATH of a `K=V` environment array, or the default. */
export function pathOf(env: readonly string[]): string {
  for (const entry of env) if (entry.startsWith('PATH=')) return entry.slice(5)
  return DEFAULT_PATH
}
