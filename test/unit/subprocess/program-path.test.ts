// The one PATH search of the spawn path, on real files: a bare name is found on PATH (executable
// regular files only), a name with a slash is taken as is, relative and empty entries are skipped.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PATH, findProgram, pathOf } from '../../../src/subprocess/program-path.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-program-path')
const dir = (name: string) => {
  const d = path.join(root, name)
  fs.mkdirSync(d, { recursive: true })
  return d
}
const file = (d: string, name: string, mode: number) => {
  fs.writeFileSync(path.join(d, name), '#!/bin/sh\n')
  fs.chmodSync(path.join(d, name), mode)
}

describe('findProgram', () => {
  const plain = dir('plain')
  const tools = dir('tools')
  file(plain, 'tool', 0o644)
  file(tools, 'tool', 0o755)
  dir('tools/subdir-tool')
  file(plain, 'only-plain', 0o644)

  it('takes a name with a slash as it is, and finds no empty name', () => {
    expect(findProgram('./x')).toEqual({ path: './x' })
    expect(findProgram('/no/such')).toEqual({ path: '/no/such' })
    expect(findProgram('', `${tools}`)).toEqual({ error: 'ENOENT' })
  })

  it('finds the first executable regular file, past a non-executable one and a directory', () => {
    expect(findProgram('tool', `${plain}:${tools}`)).toEqual({ path: path.join(tools, 'tool') })
    expect(findProgram('tool', `${tools}/`)).toEqual({ path: path.join(tools, 'tool') })
    expect(findProgram('subdir-tool', tools)).toEqual({ error: 'ENOENT' })
  })

  it('says EACCES when the only match cannot be run, ENOENT when there is none', () => {
    expect(findProgram('only-plain', plain)).toEqual({ error: 'EACCES' })
    expect(findProgram('nowhere', `${plain}:${tools}`)).toEqual({ error: 'ENOENT' })
  })

  it('skips relative and empty entries: they would name the cwd', () => {
    const cwd = process.cwd()
    process.chdir(tools)
    try {
      expect(findProgram('tool', `:.:tools`)).toEqual({ error: 'ENOENT' })
    } finally {
      process.chdir(cwd)
    }
  })
})

describe('pathOf', () => {
  it("reads PATH from a K=V array, or gives the shell's default", () => {
    expect(pathOf(['HOME=/root', 'PATH=/opt/bin:/bin'])).toBe('/opt/bin:/bin')
    expect(pathOf(['HOME=/root', 'MYPATH=/x'])).toBe(DEFAULT_PATH)
  })
})
