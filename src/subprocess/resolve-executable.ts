/**
 * Resolving a configured executable the way the runtime will spawn it: absolute paths are
 * verified, bare names searched on the scrubbed PATH plus explicit overrides.
 */
import fs, { constants } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import { InvalidRequestError } from '../policy/errors.js'
import { mergeEnv, scrubbedParentEnv } from './env/scrub.js'

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const s = await fs.promises.stat(path)
    if (!s.isFile()) return false
    await fs.promises.access(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** A canonical path to an executable regular file for `command`; throws when there is none. */
export async function resolveExecutable(
  command: string,
  env?: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<string> {
  signal?.throwIfAborted()
  if (command === '' || command.includes('\0'))
    throw new InvalidRequestError([`command: must be a non-empty name or absolute path`])
  if (isAbsolute(command)) {
    if (!(await isExecutableFile(command)))
      throw new InvalidRequestError([`command: ${command} is not an executable file`])
    return fs.promises.realpath(command)
  }
  if (command.includes('/')) {
    throw new InvalidRequestError([
      `command: ${command} is a relative path; give an absolute path or a bare name on PATH`,
    ])
  }
  const path = mergeEnv(scrubbedParentEnv(), env).PATH ?? ''
  for (const dir of path.split(delimiter)) {
    signal?.throwIfAborted()
    if (!isAbsolute(dir)) continue // an empty or relative entry would mean "the cwd": never
    const candidate = join(dir, command)
    if (await isExecutableFile(candidate)) return fs.promises.realpath(candidate)
  }
  throw new InvalidRequestError([`command: ${command} was not found on PATH`])
}
