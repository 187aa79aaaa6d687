// The CLI's exit status and denial line, as pure functions of a result: 124 on timeout (as
// timeout(1)), 128+N for a signal, else the command's code; the one line that names what was
// denied and the flag that would allow it.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { denialLine, exitStatusOf } from '../../../src/cli/run.js'
import { shellQuote } from '../../../src/cli/shell-quote.js'
import { terminalExitStatus } from '../../../src/cli/shell.js'
import { EXIT_CORDON_FAILED, EXIT_TIMED_OUT } from '../../../src/cli/usage-error.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import type { ShellRunResult } from '../../../src/shell/types.js'
import { scratchDir } from '../../support/scratch.js'

const { SIGKILL, SIGTERM, SIGINT } = os.constants.signals

function result(over: Partial<ShellRunResult>): ShellRunResult {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    aborted: false,
    timeoutMs: 1000,
    stdout: { text: '', truncated: false },
    stderr: { text: '', truncated: false },
    ...over,
  }
}

describe('exitStatusOf', () => {
  it("is the command's own code", () => {
    expect(exitStatusOf(result({ exitCode: 0 }))).toBe(0)
    expect(exitStatusOf(result({ exitCode: 3 }))).toBe(3)
  })

  it('is 128+N for a signal death', () => {
    expect(exitStatusOf(result({ exitCode: null, signal: 'SIGKILL' }))).toBe(128 + SIGKILL)
    expect(exitStatusOf(result({ exitCode: null, signal: 'SIGTERM' }))).toBe(128 + SIGTERM)
  })

  it('is 124 on timeout, whatever the command did on its way out', () => {
    expect(EXIT_TIMED_OUT).toBe(124)
    expect(exitStatusOf(result({ timedOut: true, exitCode: null, signal: 'SIGTERM' }))).toBe(124)
    expect(exitStatusOf(result({ timedOut: true, exitCode: 0 }))).toBe(124)
  })

  it('is 1 when neither a code nor a signal is known, never a code cordon keeps for itself', () => {
    expect(exitStatusOf(result({ exitCode: null }))).toBe(1)
    expect(EXIT_CORDON_FAILED).toBe(125)
  })
})

describe('terminalExitStatus', () => {
  it('is the code, or 128+N for a signal, or 1', () => {
    expect(terminalExitStatus({ exitCode: 5, signal: null })).toBe(5)
    expect(terminalExitStatus({ exitCode: null, signal: 'SIGINT' })).toBe(128 + SIGINT)
    expect(terminalExitStatus({ exitCode: null, signal: null })).toBe(1)
  })
})

describe('denialLine', () => {
  const policy = { mode: 'read-only' as const, workspaceRoot: '/work/project' }
  const denied = (paths: string[]) =>
    result({ exitCode: 1, sandbox: { mode: 'read-only', denied: true, deniedPaths: paths } })

  it('says nothing when nothing was denied', () => {
    expect(denialLine(result({ exitCode: 1 }), policy)).toBeUndefined()
    expect(denialLine(result({ exitCode: 1, sandbox: { mode: 'read-only', denied: false } }), policy)).toBeUndefined()
  })

  it('inside the root: workspace-write allows it', () => {
    expect(denialLine(denied(['/work/project/out.txt']), policy)).toBe(
      'cordon: sandbox denied a write to /work/project/out.txt under read-only mode; to allow it: --mode workspace-write (or --mode danger-full-access)',
    )
  })

  it('outside the root: the nearest existing directory once, shell-quoted, as --writable', () => {
    const dir = fs.realpathSync(scratchDir("cordon-it's here"))
    fs.mkdirSync(path.join(dir, 'out'))
    expect(denialLine(denied([`${dir}/out/a`, `${dir}/out/b`, `${dir}/missing/c`]), policy)).toBe(
      `cordon: sandbox denied a write to ${dir}/out/a, ${dir}/out/b, ${dir}/missing/c under read-only mode; to allow it: --mode workspace-write --writable ${shellQuote(`${dir}/out`)} --writable ${shellQuote(dir)} (or --mode danger-full-access)`,
    )
  })

  it('a system dir or the host temp dir gets no flag that would not work', () => {
    expect(denialLine(denied(['/etc/a', '/tmp/b']), policy)).toBe(
      'cordon: sandbox denied a write to /etc/a, /tmp/b under read-only mode; no writable root can allow /etc/a, /tmp/b (a host temp dir or a system dir: write to $TMPDIR, or use --mode danger-full-access)',
    )
  })

  it("paths from the run's output are shown escaped: no control reaches the terminal", () => {
    const dir = fs.realpathSync(scratchDir('cordon-denied'))
    const hostile = `${dir}/a\r\x1b[2Kok\u202e\n`
    fs.mkdirSync(hostile)
    const line = denialLine(denied([`${hostile}/f`]), policy) as string
    expect(line).toContain(`${dir}/a\\r\\x1b[2Kok\\u202e\\n/f under read-only mode`)
    expect(line).toContain(`--writable $'${dir}/a\\r\\x1b[2Kok\\u202e\\n'`)
    const unreachable = denialLine(denied(['/etc/\x9bx']), policy) as string
    expect(unreachable).toContain('no writable root can allow /etc/\\x9bx (')
    for (const text of [line, unreachable]) {
      expect(holdsRawControl(text)).toBe(false)
      expect(text.split('\n')).toHaveLength(1)
    }
  })
})
