// A current directory removed before `cordon` starts (the person's shell still in it): a clear
// line naming the directory and what to do, exit 125, nothing run; with an absolute `--root DIR`
// the command runs there instead. Each case really spawns the CLI from a directory it then deletes.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { shellQuote } from '../../../../src/cli/shell-quote.js'
import { scratchDir } from '../../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', '..', 'bin', 'cordon.js')
const base = scratchDir('cordon-cwd-gone')

/** Runs `cordon ARGS` from a directory that the same shell removes right before. */
function fromRemovedDir(name: string, args: string[]) {
  const dir = join(base, name)
  mkdirSync(dir)
  const words = [process.execPath, bin, ...args].map(shellQuote).join(' ')
  const r = spawnSync('sh', ['-c', `cd ${shellQuote(dir)} && rmdir ${shellQuote(dir)} && exec ${words}`], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  expect(existsSync(dir)).toBe(false)
  return { dir, status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const GONE = (dir: string) =>
  `cordon: the current directory ${dir} no longer exists; cd to a directory that exists, or give an absolute --root DIR to run there\n`

describe('a removed current directory', () => {
  it('cordon run: one line naming it and what to do, exit 125, nothing run', () => {
    const marker = join(base, 'ran')
    const r = fromRemovedDir('run', ['run', '--mode', 'danger-full-access', '--', 'touch', marker])
    expect(r.status).toBe(125)
    expect(r.stderr).toBe(GONE(r.dir))
    expect(r.stdout).toBe('')
    expect(existsSync(marker)).toBe(false)
  })

  it('cordon run --json: the same, as a JSON error', () => {
    const r = fromRemovedDir('json', ['run', '--json', '--', 'true'])
    expect(r.status).toBe(125)
    expect(JSON.parse(r.stdout)).toEqual({
      error: { name: 'CwdGoneError', code: 'CORDON_CWD_GONE', message: GONE(r.dir).slice('cordon: '.length, -1) },
    })
  })

  it('cordon explain and cordon shell say the same; a relative --root is named', () => {
    for (const verb of ['explain', 'shell']) {
      const r = fromRemovedDir(verb, [verb, '--mode', 'danger-full-access'])
      expect(r.status).toBe(125)
      expect(r.stderr).toBe(GONE(r.dir))
    }
    const relative = fromRemovedDir('relative', ['run', '--root', 'sub', '--', 'true'])
    expect(relative.status).toBe(125)
    expect(relative.stderr).toContain(`no longer exists (--root sub is relative to it); cd to`)
  })

  it('with an absolute --root, the command runs there', () => {
    const root = scratchDir('cordon-cwd-root')
    const r = fromRemovedDir('rooted', ['run', '--mode', 'danger-full-access', '--root', root, '--', 'pwd'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${root}\n`)
  })
})
