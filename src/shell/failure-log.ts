/**
 * Where the commands of a confined `bash -c` ran: bash sources profiles/dir-log.bash (through
 * BASH_ENV), whose `cd`, `pushd` and `popd` append each new working directory to a log in the
 * session's TMPDIR. The host splits the command text at its directory changes and pairs each
 * part with the directory it ran in, so the denial classifier resolves a message's relative path
 * against the directory the failing command really ran in (after `cd pkg/sub`), instead of
 * guessing. No trap: one would make bash fork the command it otherwise execs last, and a signal
 * that kills it would reach the host as an exit code. The file itself lies in the session's spill
 * dir, which its commands can read but not change (so no command can plant code into a later,
 * perhaps wider, run of the session). The log is the command's own output, trusted no more than
 * its stderr: it only steers which path a denial names.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { SubprocessSpawnSpec } from '../subprocess/types.js'
import { removeTreeSync } from '../subprocess/private-dirs/remove-tree.js'
import { uniqueSuffix } from '../subprocess/private-dirs/unique-name.js'
import { PACKAGE_ROOT } from '../policy/package-root.js'

/** One part of a run: the shell's working directory and the command text it ran there. */
export interface FailedCommand {
  cwd: string
  command: string
}

const LOG_SOURCE = path.join(PACKAGE_ROOT, 'profiles/dir-log.bash')
/** The most of a log read back (a command changing directory in a loop must not cost the host memory). */
const MAX_LOG_BYTES = 64 * 1024
/** A directory change in the command text: `cd`, `pushd` or `popd` where a command word starts. */
const DIRECTORY_CHANGE = /(?<=^|[\s;&|({`])(?:cd|pushd|popd)(?=$|[\s;&|)}`])/g
/** A part of the text that runs something (more than operators and blanks). */
const RUNS_SOMETHING = /[^\s;&|(){}`]/
/** Where the change's own words end: the next operator or line end. */
const COMMAND_END = /[;&|)}`\n]/g

let logText: string | undefined

/** Arms the log for one run: the spec with BASH_ENV set, and the log's path; unchanged without both dirs. */
export function armFailureLog(
  spec: SubprocessSpawnSpec,
  dirs: { tempDir?: string | undefined; spillDir?: string | undefined },
): { spec: SubprocessSpawnSpec; log: string | undefined } {
  if (dirs.tempDir === undefined || dirs.spillDir === undefined) return { spec, log: undefined }
  const source = path.join(dirs.spillDir, 'dir-log.bash')
  try {
    if (!fs.existsSync(source)) {
      logText ??= fs.readFileSync(LOG_SOURCE, 'utf8')
      fs.writeFileSync(source, logText, { mode: 0o444 })
    }
  } catch {
    return { spec, log: undefined } // no log: the classifier falls back to what the command text says
  }
  const log = path.join(dirs.tempDir, `.cordon-dirs-${uniqueSuffix()}`)
  const userBashEnv = spec.env?.BASH_ENV ?? process.env.BASH_ENV
  const env = {
    ...spec.env,
    BASH_ENV: source,
    CORDON_DIR_LOG: log,
    ...(userBashEnv ? { CORDON_USER_BASH_ENV: userBashEnv } : {}),
  }
  return { spec: { ...spec, env }, log }
}

/**
 * The parts of a run's command with the directory each ran in (removing the log); empty when the
 * shell never changed directory. When the logged changes match the text's, each part of the text
 * (from one change to the next) is paired with its directory; otherwise (a change in a loop, a
 * function, a failed `cd`) every directory the shell was in is listed with no text.
 */
export function readFailureLog(log: string | undefined, run: { cwd: string; command: string }): FailedCommand[] {
  const dirs = readDirectories(log)
  if (dirs.length === 0) return []
  const changes = [...run.command.matchAll(DIRECTORY_CHANGE)].map((m) => m.index)
  if (changes.length !== dirs.length) return [run.cwd, ...dirs].map((cwd) => ({ cwd, command: '' }))
  const parts: FailedCommand[] = [{ cwd: run.cwd, command: run.command.slice(0, changes[0]) }]
  for (const [i, at] of changes.entries()) {
    COMMAND_END.lastIndex = at
    const from = COMMAND_END.exec(run.command)?.index ?? run.command.length
    const to = changes[i + 1] ?? run.command.length
    parts.push({ cwd: dirs[i]!, command: run.command.slice(Math.min(from, to), to) })
  }
  // A part with nothing in it (the text opens with `cd`) ran nowhere: its directory is no candidate.
  return parts.filter((part) => RUNS_SOMETHING.test(part.command))
}

/** The directories a run's shell changed to, in order (removing the log). */
function readDirectories(log: string | undefined): string[] {
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
  // A cut at MAX_LOG_BYTES leaves a partial last entry: only NUL-terminated ones count.
  return text
    .split('\0')
    .slice(0, -1)
    .filter((dir) => dir.startsWith('/'))
}
