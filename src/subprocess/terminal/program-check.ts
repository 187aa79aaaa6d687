/**
 * The terminal's program and directory, checked the way `spawn` fails: node-pty's child would
 * otherwise print `execvp(3) failed` into the terminal and exit 1, which reads as the program's
 * own failure.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs'
import { constants as osConstants } from 'node:os'
import { delimiter, isAbsolute, join, resolve as resolvePath } from 'node:path'
import { SpawnError } from '../../policy/errors.js'
import type { SubprocessTerminalSpawnSpec } from '../types.js'

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, fsConstants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Throws SpawnError at `chdir` unless `cwd` is a directory. */
function checkCwd(cwd: string): void {
  const cwdStat = statSync(cwd, { throwIfNoEntry: false })
  if (!cwdStat?.isDirectory()) {
    const errno = cwdStat ? osConstants.errno.ENOTDIR : osConstants.errno.ENOENT
    throw new SpawnError({ stage: 'chdir', errno, path: cwd })
  }
}

/** Whether `program` (a bare name) is an executable file in a directory of `searchPath` (relative ones from `cwd`). */
function onPath(program: string, searchPath: string, cwd: string): boolean {
  for (const dir of searchPath.split(delimiter)) {
    if (dir !== '' && isExecutableFile(join(isAbsolute(dir) ? dir : resolvePath(cwd, dir), program))) return true
  }
  return false
}

/**
 * Throws the SpawnError `spawn` would (chdir, exec) for a missing directory or program. The
 * program is looked up as the child's execvp will: by path when it holds a slash (relative to
 * cwd), else on the child's own PATH (glibc's default when it has none). Synchronous: a few stat
 * calls cost less than the thread-pool round trips of their async forms.
 */
export function checkProgram(spec: SubprocessTerminalSpawnSpec, env: Record<string, string>): void {
  checkCwd(spec.cwd)
  const program = spec.argv[0]!
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolvePath(spec.cwd, program)
    if (isExecutableFile(path)) return
    const exists = statSync(path, { throwIfNoEntry: false }) !== undefined
    throw new SpawnError({ stage: 'exec', errno: exists ? osConstants.errno.EACCES : osConstants.errno.ENOENT, path })
  }
  if (!onPath(program, env.PATH ?? '/bin:/usr/bin', spec.cwd)) {
    throw new SpawnError({ stage: 'exec', errno: osConstants.errno.ENOENT, path: program })
  }
}
