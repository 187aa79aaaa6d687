/**
 * The directory a verb works in: the current one, or, when it was removed after the person's
 * shell entered it, an absolute `--root DIR`. Without either, one clear error (exit 125, nothing
 * run) instead of Node's "ENOENT: uv_cwd".
 */
import { readlinkSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { displayLine } from '../../policy/display-text.js'

/** The current directory was removed: no command can start there. */
export class CwdGoneError extends Error {
  override readonly name = 'CwdGoneError'
  readonly code = 'CORDON_CWD_GONE'
}

/** The removed directory's path: the kernel's name for it without " (deleted)", else $PWD, else undefined. */
export function removedCwdName(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    const link = readlinkSync('/proc/self/cwd')
    return link.endsWith(' (deleted)') ? link.slice(0, -' (deleted)'.length) : link
  } catch {
    return env.PWD || undefined
  }
}

/**
 * The working directory: process.cwd(), else the absolute `root` when the current directory is
 * gone. Throws CwdGoneError naming the directory and what to do when neither will serve.
 */
export function workingDirectory(root: unknown, cwd: () => string = process.cwd): string {
  try {
    return cwd()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  if (typeof root === 'string' && isAbsolute(root)) return root
  const name = removedCwdName()
  const what = name === undefined ? 'the current directory' : `the current directory ${displayLine(name)}`
  const relative = typeof root === 'string' ? ` (--root ${displayLine(root)} is relative to it)` : ''
  throw new CwdGoneError(
    `${what} no longer exists${relative}; cd to a directory that exists, or give an absolute --root DIR to run there`,
  )
}
