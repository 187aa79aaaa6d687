// Nested checkouts and the stamps that notice a new one: against a real directory tree.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkoutsIn, type DirStamp, unchangedDirs } from '../../../../src/sandbox/view/nested-checkouts.js'
import { scratchDir } from '../../../support/scratch.js'

const root = fs.realpathSync(scratchDir('cordon-nested-checkouts'))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
const mk = (...parts: string[]) => fs.mkdirSync(path.join(root, ...parts), { recursive: true })

describe('checkoutsIn', () => {
  mk('a', '.git')
  mk('b', 'c', '.git')
  mk('b', 'd', 'e', '.git') // three levels down: not searched
  mk('node_modules', 'x', '.git') // never searched
  const stamped: string[] = []
  const searched: DirStamp[] = []
  const found = checkoutsIn(root, (p) => stamped.push(p), searched)

  it('finds the root and checkouts up to two levels below it, stamping each .git', () => {
    expect(found.sort()).toEqual([root, path.join(root, 'a'), path.join(root, 'b', 'c')].sort())
    expect(stamped.sort()).toEqual([path.join(root, 'a', '.git'), path.join(root, 'b', 'c', '.git')].sort())
  })

  it('stamps every directory it listed, and notices a checkout made in one of them', () => {
    expect(searched.map((s) => s.dir)).toContain(root)
    expect(searched.map((s) => s.dir)).toContain(path.join(root, 'b'))
    expect(unchangedDirs(searched)).toBe(true)
    mk('b', 'new', '.git')
    expect(unchangedDirs(searched)).toBe(false)
  })

  it('takes a searched directory that is gone as a change', () => {
    mk('gone')
    const stamps: DirStamp[] = []
    checkoutsIn(path.join(root, 'gone'), () => {}, stamps)
    fs.rmdirSync(path.join(root, 'gone'))
    expect(unchangedDirs(stamps)).toBe(false)
  })
})
