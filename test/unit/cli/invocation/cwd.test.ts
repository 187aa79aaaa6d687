// The working directory of a verb when the current one was removed: --root if absolute, else a
// CwdGoneError naming the directory. The directory is really removed under this process.
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CwdGoneError, removedCwdName, workingDirectory } from '../../../../src/cli/invocation/cwd.js'
import { scratchDir } from '../../../support/scratch.js'

const home = process.cwd()
afterEach(() => process.chdir(home))

/** Enters a fresh directory and removes it: this process's cwd is then gone. */
function enterRemoved(): string {
  const dir = path.join(scratchDir('cordon-cwd-unit'), 'gone')
  fs.mkdirSync(dir)
  process.chdir(dir)
  fs.rmdirSync(dir)
  return dir
}

describe('workingDirectory', () => {
  it('is the current directory while it exists (--root does not move it)', () => {
    expect(workingDirectory(undefined)).toBe(home)
    expect(workingDirectory('/usr')).toBe(home)
  })

  it('a removed one: named, with what to do; an absolute --root serves instead', () => {
    const dir = enterRemoved()
    expect(() => process.cwd()).toThrow(/ENOENT/)
    expect(removedCwdName()).toBe(dir)
    expect(() => workingDirectory(undefined)).toThrow(
      new CwdGoneError(
        `the current directory ${dir} no longer exists; cd to a directory that exists, or give an absolute --root DIR to run there`,
      ),
    )
    expect(() => workingDirectory('rel')).toThrow(/no longer exists \(--root rel is relative to it\); cd to/)
    expect(workingDirectory('/usr')).toBe('/usr')
  })

  it('another failure of process.cwd() is not taken for a removed directory', () => {
    const denied = Object.assign(new Error('EACCES: permission denied, uv_cwd'), { code: 'EACCES' })
    expect(() =>
      workingDirectory(undefined, () => {
        throw denied
      }),
    ).toThrow(denied)
  })

  it("without /proc, the name is $PWD's", () => {
    expect(removedCwdName({ PWD: '/somewhere' })).toBeDefined()
    expect(new CwdGoneError('x')).toMatchObject({ name: 'CwdGoneError', code: 'CORDON_CWD_GONE' })
  })
})
