// The symlinks on the way from a writable root to a protected path, each under its real directory.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { linksOnTheWay } from '../../../../src/sandbox/view/protected-links.js'
import { scratchDir } from '../../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-protected-links'))
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const lstat = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false })

describe('linksOnTheWay', () => {
  it('each link on the way, a later one named under the dir the earlier one leads to', () => {
    const root = path.join(base, 'nested')
    fs.mkdirSync(path.join(root, 'a', 'b'), { recursive: true })
    fs.writeFileSync(path.join(root, 'a', 'b', 'file'), '')
    fs.symlinkSync('b', path.join(root, 'a', 'c'))
    fs.symlinkSync('a', path.join(root, 'link'))
    const seen: string[] = []
    const links = linksOnTheWay(path.join(root, 'link', 'c', 'file'), [root], (p) => {
      seen.push(p)
      return lstat(p)
    })
    expect(links).toEqual([
      { path: path.join(root, 'link'), target: 'a' },
      { path: path.join(root, 'a', 'c'), target: 'b' },
    ])
    expect(seen).toContain(path.join(root, 'link'))
  })

  it('a dangling link is named; nothing outside a root, nothing when no link is on the way', () => {
    const root = path.join(base, 'dangling')
    fs.mkdirSync(root)
    fs.symlinkSync('missing', path.join(root, '.envrc'))
    expect(linksOnTheWay(path.join(root, '.envrc'), [root], lstat)).toEqual([
      { path: path.join(root, '.envrc'), target: 'missing' },
    ])
    expect(linksOnTheWay(path.join(base, 'elsewhere', 'x'), [root], lstat)).toEqual([])
    expect(linksOnTheWay(path.join(root, 'plain', 'x'), [root], lstat)).toEqual([])
  })
})
