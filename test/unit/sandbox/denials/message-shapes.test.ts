// The refusal shapes beyond `PATH: <errno text>`, each read from a real tool's message (the
// labelled corpus, corpus.json, runs them end to end through the classifier): what path each
// names and what operation it says, never whether the sandbox refused it.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { recognise, type ShapeContext } from '../../../../src/sandbox/denials/message-shapes.js'
import { scratchDir } from '../../../support/scratch.js'

const base = scratchDir('cordon-shapes')
const context = (over: Partial<ShapeContext> = {}): ShapeContext => ({
  backend: 'landlock',
  signatures: ['permission denied'],
  codes: ['EACCES'],
  basesOf: () => [base],
  runs: [],
  ...over,
})
/** What the shape reading line `i` of `text` names. */
const named = (text: string, i: number, over: Partial<ShapeContext> = {}) =>
  recognise(text.split('\n'), i, context(over))?.named

describe('recognise', () => {
  it('a line without a refusal is none', () => {
    expect(recognise(['all good'], 0, context())).toBeUndefined()
  })

  it("an errno alone on its line takes the path of the nearest failing line above (cargo's chain, CMake)", () => {
    const cargo =
      'error: failed to write /p/Cargo.lock\n\nCaused by:\n  failed to open: /p/Cargo.lock\n\nCaused by:\n  Permission denied (os error 13)'
    expect(named(cargo, 6)).toEqual([{ path: '/p/Cargo.lock' }])
    const cmake =
      'CMake Error: Unable to open cache file for save. /b/CMakeCache.txt\nCMake Error: : System Error: Permission denied'
    expect(named(cmake, 1)).toEqual([{ path: '/b/CMakeCache.txt' }])
    // Another refusal between them ends the chain.
    expect(named('failed to open /a\nx: Permission denied\nPermission denied (os error 13)', 2)).toEqual([])
  })

  it("npm's code block: the path a few lines below, the block its operation", () => {
    const npm =
      'npm error code EACCES\nnpm error syscall open\nnpm error path /h/.npmrc\nnpm error     at async writeFile (x)'
    const found = recognise(npm.split('\n'), 0, context())
    expect(found?.named).toEqual([{ path: '/h/.npmrc' }])
    expect(found?.operation).toContain('writeFile')
    expect(named('npm error code ENOENT\nnpm error path /x', 0)).toBeUndefined()
  })

  it("a refused push names the local repository of the `To` line, never a URL's", () => {
    fs.mkdirSync(path.join(base, 'remote.git', 'objects'), { recursive: true })
    fs.mkdirSync(path.join(base, 'work', '.git'), { recursive: true })
    const push = (to: string) => `error: remote unpack failed: unable to create temporary object directory\nTo ${to}`
    expect(named(push('remote.git'), 0)).toEqual([{ path: path.join(base, 'remote.git') }])
    expect(named(push(path.join(base, 'work')), 0)).toEqual([{ path: path.join(base, 'work', '.git') }])
    expect(named(push('git@host:r.git'), 0)).toEqual([])
    expect(named(push('ssh://host/r.git'), 0)).toEqual([])
  })

  it("CMake's path on the next line, absolute only", () => {
    const cmake = 'CMake Error: Unable to (re)create the private pkgRedirects directory:\n/b/CMakeFiles/pkgRedirects'
    expect(named(cmake, 0)).toEqual([{ path: '/b/CMakeFiles/pkgRedirects' }])
    expect(named('CMake Error: Unable to (re)create the private pkgRedirects directory:\nb/x', 0)).toBeUndefined()
  })

  it("sqlite's read-only database: the existing database the command's sqlite3 names (not -readonly)", () => {
    fs.writeFileSync(path.join(base, 'db.sqlite'), '')
    const runs = (command: string) => ({ runs: [{ cwd: base, command }] })
    const line = 'Error: stepping, attempt to write a readonly database (8)'
    expect(named(line, 0, runs("sqlite3 -bail -cmd '.timeout 9' db.sqlite 'insert'"))).toEqual([
      { path: path.join(base, 'db.sqlite') },
    ])
    expect(named(line, 0, runs("sqlite3 -readonly db.sqlite 'insert'"))).toEqual([])
    expect(named(line, 0, runs("sqlite3 other.sqlite 'insert'"))).toEqual([])
    fs.writeFileSync(path.join(base, 'b.sqlite'), '')
    expect(named(line, 0, runs("sqlite3 db.sqlite 'select 1'; sqlite3 b.sqlite 'insert'"))).toEqual([
      { candidates: [path.join(base, 'db.sqlite'), path.join(base, 'b.sqlite')] },
    ])
  })

  it("bubblewrap's masked mkdir: ENOENT where the parent exists", () => {
    const line = `Error: ENOENT: no such file or directory, mkdir '${base}/new'`
    expect(named(line, 0, { backend: 'bubblewrap' })).toEqual([{ path: `${base}/new` }])
    expect(named(line, 0)).toBeUndefined()
    expect(
      named(`Error: ENOENT: no such file or directory, mkdir '${base}/no/new'`, 0, { backend: 'bubblewrap' }),
    ).toBeUndefined()
  })
})
