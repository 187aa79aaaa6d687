// Which paths a denial line names: quoted or bare, a bare name only where a path stands, relative
// ones against the one base that could hold them (never a guess between several).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  isWithin,
  landingPath,
  namedPaths,
  pathsInLine,
  pathTokens,
  placeToken,
} from '../../../../src/sandbox/denials/line-paths.js'
import { scratchDir } from '../../../support/scratch.js'

describe('pathsInLine', () => {
  it('reads quoted paths in every quoting style tools use', () => {
    expect(pathsInLine("touch: cannot touch '/etc/a': Permission denied", '/w')).toEqual(['/etc/a'])
    expect(pathsInLine('grep: "/etc/b": Permission denied', '/w')).toEqual(['/etc/b'])
    expect(pathsInLine("cp: cannot create regular file `/etc/c': Permission denied", '/w')).toEqual(['/etc/c'])
    expect(pathsInLine('mkdir: cannot create directory ‘/etc/d’: Permission denied', '/w')).toEqual(['/etc/d'])
  })

  it('reads the bare token before ": <error>" and leaves program names out', () => {
    expect(pathsInLine('sh: 1: cannot create /etc/e: Permission denied', '/w')).toEqual(['/etc/e'])
    expect(pathsInLine('bash: /usr/f: Read-only file system', '/w')).toEqual(['/usr/f'])
    expect(pathsInLine('tee: /etc/g: Operation not permitted', '/w')).toEqual(['/etc/g'])
    expect(pathsInLine('touch: Permission denied', '/w')).toEqual([])
  })

  it('takes a bare name for a path only where a path stands, never a word of the message', () => {
    expect(pathsInLine('bash: Makefile: Permission denied', '/w')).toEqual(['/w/Makefile'])
    expect(pathsInLine('bash: line 1: out: Read-only file system', '/w')).toEqual(['/w/out'])
    expect(pathsInLine('script: failed to create pseudo-terminal: Permission denied', '/w')).toEqual([])
    expect(pathsInLine('/usr/bin/ld: cannot open output file hello: Permission denied', '/w')).toEqual(['/w/hello'])
    expect(pathsInLine('tar: build: Cannot mkdir: Read-only file system', '/w')).toEqual(['/w/build'])
    // dash's redirection, perl's in-place edit, Python's [Errno N] between the colon and the text.
    expect(pathsInLine('/bin/sh: 1: cannot create out.txt: Permission denied', '/w')).toEqual(['/w/out.txt'])
    expect(pathsInLine("Can't do inplace edit on f.txt: Cannot make temp name: Permission denied.", '/w')).toEqual([
      '/w/f.txt',
    ])
    expect(pathsInLine('could not create /w/c/n: [Errno 13] Permission denied', '/x')).toEqual(['/w/c/n'])
    expect(pathsInLine("PermissionError: [Errno 13] Permission denied: 'a'", '/w')).toEqual(['/w/a'])
  })

  it('names each path once, and normalises absolute ones', () => {
    expect(pathsInLine("rm: cannot remove '/etc//h/../h': Permission denied", '/w')).toEqual(['/etc/h'])
    expect(pathsInLine("ln: '/etc/h': Permission denied (at '/etc/h')", '/w')).toEqual(['/etc/h'])
  })

  it('error codes and exception names are not paths', () => {
    expect(pathTokens('open EACCES: Permission denied')).toEqual([])
    expect(pathTokens('OSError: [Errno 30] Read-only file system')).toEqual([])
  })
})

describe('placeToken', () => {
  it('resolves a relative path against the one base that could hold it; never guesses between several', () => {
    const base = scratchDir('cordon-line-paths')
    fs.mkdirSync(path.join(base, 'sub', 'out'), { recursive: true })
    const line = "touch: cannot touch 'out/x': Permission denied"
    expect(pathsInLine(line, base, [path.join(base, 'sub'), base])).toEqual([path.join(base, 'sub', 'out', 'x')])
    expect(pathsInLine(line, base, ['/nonexistent-base', base])).toEqual([])
    fs.mkdirSync(path.join(base, 'out'))
    expect(placeToken('out/x', [path.join(base, 'sub'), base])).toEqual({
      candidates: [path.join(base, 'sub', 'out', 'x'), path.join(base, 'out', 'x')],
    })
    expect(placeToken('y', [base])).toEqual({ path: path.join(base, 'y') })
    expect(placeToken('y', [])).toBeUndefined()
    expect(namedPaths("cp: cannot create regular file 'a': Permission denied", () => [])).toEqual([])
  })
})

describe('landingPath', () => {
  it('follows the symlinks of the longest existing prefix', () => {
    const base = scratchDir('cordon-landing')
    fs.mkdirSync(path.join(base, 'real'))
    fs.symlinkSync(path.join(base, 'real'), path.join(base, 'link'))
    expect(landingPath(path.join(base, 'link', 'new', 'f'))).toBe(path.join(base, 'real', 'new', 'f'))
  })
})

describe('isWithin', () => {
  it('is the root itself or below it, never a sibling sharing a prefix', () => {
    expect(isWithin('/a/b', '/a/b')).toBe(true)
    expect(isWithin('/a/b/c', '/a/b')).toBe(true)
    expect(isWithin('/a/bc', '/a/b')).toBe(false)
    expect(isWithin('/a', '/a/b')).toBe(false)
    expect(isWithin('/x', '/')).toBe(true)
  })
})
