/**
 * Reading one configuration file the way the host may trust it: a bounded read (at most
 * MAX_CONFIG_BYTES) of a regular file, never a FIFO or a device that could block or stream, and
 * for a project config never through a symlink (O_NOFOLLOW: a run could point a link anywhere, and
 * the digest record would then guard the wrong file). node:crypto loads only when a file exists.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { ConfigInvalidError } from '../errors.js'
import { MAX_CONFIG_BYTES } from './schema.js'

/** A configuration file as read: its path, its text, and the sha256 of its bytes (hex). */
export interface ConfigFileRead {
  path: string
  text: string
  digest: string
}

const require = createRequire(import.meta.url)

/** The sha256 of `bytes` as hex (node:crypto loaded on the first call). */
export function sha256Hex(bytes: Uint8Array | string): string {
  const { createHash } = require('node:crypto') as typeof import('node:crypto')
  return createHash('sha256').update(bytes).digest('hex')
}

/** Why opening `file` failed, as the issue a person reads; undefined when the file is simply absent. */
function openProblem(code: string | undefined, followLinks: boolean): string | undefined {
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
  if (code === 'ELOOP' && !followLinks)
    return '(file): is a symbolic link; cordon reads this config only as a regular file (a link could lead into a writable root, or a run could point it anywhere): replace the link with the file itself'
  return `(file): cannot be opened (${code ?? 'error'})`
}

/** Opens `file` for reading; undefined when it does not exist. */
function open(file: string, followLinks: boolean): number | undefined {
  const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants
  try {
    return fs.openSync(file, O_RDONLY | O_NONBLOCK | (followLinks ? 0 : O_NOFOLLOW))
  } catch (error) {
    const problem = openProblem((error as NodeJS.ErrnoException).code, followLinks)
    if (problem === undefined) return undefined
    throw new ConfigInvalidError(file, [problem], { cause: error })
  }
}

/** Reads at most `limit + 1` bytes of `fd` (one more shows the file grew past the limit). */
function readBounded(fd: number, limit: number): Buffer {
  const buffer = Buffer.alloc(limit + 1)
  let length = 0
  for (;;) {
    const n = fs.readSync(fd, buffer, length, buffer.length - length, null)
    if (n === 0 || length + n >= buffer.length) return buffer.subarray(0, length + n)
    length += n
  }
}

/**
 * Reads the configuration `file`, or returns undefined when it does not exist. Throws
 * ConfigInvalidError when it is not a regular file, is larger than MAX_CONFIG_BYTES, is not UTF-8,
 * cannot be opened, or (with `followLinks` false) is a symbolic link.
 */
export function readConfigFile(file: string, options: { followLinks: boolean }): ConfigFileRead | undefined {
  const fd = open(file, options.followLinks)
  if (fd === undefined) return undefined
  try {
    const refuse = (issue: string): never => {
      throw new ConfigInvalidError(file, [issue])
    }
    const st = fs.fstatSync(fd)
    if (!st.isFile()) refuse('(file): is not a regular file')
    const bytes = readBounded(fd, MAX_CONFIG_BYTES)
    if (bytes.length > MAX_CONFIG_BYTES) refuse(`(file): is larger than ${MAX_CONFIG_BYTES} bytes`)
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      return refuse('(file): is not UTF-8 text')
    }
    return { path: file, text: text.replace(/^\uFEFF/, ''), digest: sha256Hex(bytes) }
  } finally {
    fs.closeSync(fd)
  }
}
