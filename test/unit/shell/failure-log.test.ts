// The directory log: profiles/dir-log.bash in a real bash logs each cd, pushd and popd without a
// trap (so bash still execs its last command), and readFailureLog pairs each part of the command
// text with the directory it ran in, or lists every directory when the two do not line up.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { armFailureLog, readFailureLog } from '../../../src/shell/failure-log.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-dir-log'))
const cwd = path.join(base, 'root')
for (const dir of ['a', 'b', 'a/deep']) fs.mkdirSync(path.join(cwd, dir), { recursive: true })

/** Runs `command` as the executor's shell would, with the log armed; its status and the log. */
function run(command: string, env: Record<string, string> = {}) {
  const spill = fs.mkdtempSync(path.join(base, 'spill-'))
  const temp = fs.mkdtempSync(path.join(base, 'temp-'))
  const spec = {
    argv: ['bash', '-c', command],
    cwd,
    env,
    stdio: { stdin: 'ignore' as const, stdout: 'pipe' as const, stderr: 'pipe' as const },
    graceMs: 500,
  }
  const armed = armFailureLog(spec, { tempDir: temp, spillDir: spill })
  // stdin not a socket: bash would take itself for sshd's and read ~/.bashrc.
  const shellEnv = { PATH: process.env.PATH, HOME: base, ...armed.spec.env }
  const r = spawnSync('bash', ['-c', command], {
    cwd,
    env: shellEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { r, log: armed.log, logged: readFailureLog(armed.log, { cwd, command }) }
}

describe('the directory log', () => {
  it('pairs each part of the text with the directory it ran in', () => {
    const command = 'touch x; cd a && touch y; cd ../b; touch z'
    expect(run(command).logged).toEqual([
      { cwd, command: 'touch x; ' },
      { cwd: path.join(cwd, 'a'), command: '&& touch y; ' },
      { cwd: path.join(cwd, 'b'), command: '; touch z' },
    ])
  })

  it('leaves out a part that runs nothing, and subshells, pushd and popd count', () => {
    const command = 'cd a && (cd deep && pwd) && pushd ../b >/dev/null && popd >/dev/null && true'
    const { r, logged } = run(command)
    expect(r.stdout).toBe(`${path.join(cwd, 'a', 'deep')}\n`)
    // `cd a && (` and `pushd ../b >/dev/null && ` run nothing in their directories: no candidates.
    expect(logged).toEqual([
      { cwd: path.join(cwd, 'a', 'deep'), command: '&& pwd) && ' },
      { cwd: path.join(cwd, 'a'), command: '&& true' },
    ])
  })

  it('lists every directory with no text when the changes do not line up (a loop), and removes the log', () => {
    const { log, logged } = run('for d in a b; do cd "$d" && cd ..; done; false')
    expect(logged).toEqual([cwd, 'a', cwd, 'b', cwd].map((d) => ({ cwd: path.resolve(cwd, d), command: '' })))
    expect(fs.existsSync(log!)).toBe(false)
  })

  it('a failed cd logs nothing and keeps its status; no change at all is no entry', () => {
    const failed = run('cd missing; echo "status $?"')
    expect(failed.r.stdout).toBe('status 1\n')
    expect(failed.r.stderr).toMatch(/cd: missing: No such file or directory/)
    expect(failed.logged).toEqual([])
    expect(run('touch x').logged).toEqual([])
  })

  it('sets no trap, so bash still execs the last command: a signal that kills it is the shell’s (control: an ERR trap)', () => {
    const killed = run(`cd a && sh -c 'kill -USR1 $$'`)
    expect(killed.r.signal).toBe('SIGUSR1')
    expect(killed.r.stdout + killed.r.stderr).toBe('')
    const trapped = spawnSync('bash', ['-c', `trap : ERR; cd a && sh -c 'kill -USR1 $$'`], { cwd, stdio: 'ignore' })
    expect(trapped.status).toBe(138)
    expect(run('trap -p; set -o | grep -E "^(errtrace|functrace) +on"').r.stdout).toBe('')
  })

  it("runs the caller's BASH_ENV and hands it on; names nothing of its own to the command", () => {
    const userEnv = path.join(base, 'user-env.sh')
    fs.writeFileSync(userEnv, 'export FROM_USER=yes\n')
    const { r } = run('echo "$FROM_USER ${BASH_ENV-unset} ${CORDON_DIR_LOG-unset} ${CORDON_USER_BASH_ENV-unset}"', {
      BASH_ENV: userEnv,
    })
    expect(r.stdout).toBe(`yes ${userEnv} unset unset\n`)
  })

  it('reads only its own regular file, whatever the command made of it', () => {
    const { log } = run('true')
    fs.mkdirSync(log!)
    expect(readFailureLog(log, { cwd, command: 'cd a' })).toEqual([])
    expect(fs.existsSync(log!)).toBe(false)
    expect(readFailureLog(undefined, { cwd, command: 'cd a' })).toEqual([])
  })
})
