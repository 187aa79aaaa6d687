/**
 * Where each failing command of a confined `bash -c` ran: bash sources profiles/err-trap.bash
 * (through BASH_ENV), whose ERR trap appends "<PWD>\t<command>" to a log in the session's TMPDIR.
 * The denial classifier resolves a message's relative path against the directory the failing
 * command really ran in (after `cd pkg/sub`), instead of guessing. The trap file itself lies in
 * the session's spill dir, which its commands can read but not change (so no command can plant
 * code into a later, perhaps wider, run of the session). The log is the command's own output,
 * trusted no more than its stderr: it only steers which path a denial names.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { SubprocessSpawnSpec } from '../subprocess/types.js'
import { removeTreeSync } from '../subprocess/private-dirs/remove-tree.js'
import { uniqueSuffix } from '../subprocess/private-dirs/unique-name.js'
import { PACKAGE_ROOT } from '../policy/package-root.js'

/** One failed command: the shell's working directory and the command's text. */
export interface FailedCommand {
  cwd: string
  command: string
}

const TRAP_SOURCE = path.join(PACKAGE_ROOT, 'profiles/err-trap.bash')
/** The most of a log read back (a command failing in a loop must not cost the host memory). */
const MAX_LOG_BYTES = 64 * 1024

let trapText: string | undefined

/** Arms the log for one run: the spec with BASH_ENV set, and the log's path; unchanged without both dirs. */
export function armFailureLog(
  spec: SubprocessSpawnSpec,
  dirs: { tempDir?: string | undefined; spillDir?: string | undefined },
): { spec: SubprocessSpawnSpec; log: string | undefined } {
  if (dirs.tempDir === undefined || dirs.spillDir === undefined) return { spec, log: undefined }
  const trap = path.join(dirs.spillDir, 'err-trap.bash')
  try {
    if (!fs.existsSync(trap)) {
      trapText ??= fs.readFileSync(TRAP_SOURCE, 'utf8')
      fs.writeFileSync(trap, trapText, { mode: 0o444 })
    }
  } catch {
    return { spec, log: undefined } // no trap: the classifier falls back to what the command text says
  }
  const log = path.join(dirs.tempDir, `.cordon-failed-${uniqueSuffix()}`)
  const userBashEnv = spec.env?.BASH_ENV ?? process.env.BASH_ENV
  const env = {
    ...spec.env,
    BASH_ENV: trap,
    CORDON_ERR_LOG: log,
    ...(userBashEnv ? { CORDON_USER_BASH_ENV: userBashEnv } : {}),
  }
  return { spec: { ...spec, env }, log }
}

/** The failed commands a run logged (removing the log); empty when it logged none. */
export function readFailureLog(log: string | undefined): FailedCommand[] {
  if (log === undefined) return []
  let text = ''
  try {
    const fd = fs.openSync(log, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    try {
      // The command could have swapped in a FIFO or a hard link to another file: only its own log is read.
      const st = fs.fstatSync(fd)
      if (!st.isFile() || st.nlink !== 1) return []
      const buffer = Buffer.alloc(MAX_LOG_BYTES)
      text = buffer.subarray(0, fs.readSync(fd, buffer, 0, MAX_LOG_BYTES, 0)).toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return []
  } finally {
    // The command may have made it anything (a directory, say): removing it never fails the run.
    try {
      fs.unlinkSync(log)
    } catch {
      // A job of the same session may still be changing it: removed without following a link.
      removeTreeSync(log)
    }
  }
  const out: FailedCommand[] = []
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t')
    if (tab > 0 && line.startsWith('/')) out.push({ cwd: line.slice(0, tab), command: line.slice(tab + 1) })
  }
  return out
}
