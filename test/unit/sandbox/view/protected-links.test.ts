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
    const way = linksOnTheWay(path.join(root, 'link', 'c', 'file'), [root], (p) => {
      seen.push(p)
      return lstat(p)
    })
    expect(way.links).toEqual([
      { path: path.join(root, 'link'), target: 'a' },
      { path: path.join(root, 'a', 'c'), target: 'b' },
    ])
    expect(way.resolved).toBe(path.join(root, 'a', 'b', 'file'))
    expect(seen).toContain(path.join(root, 'link'))
  })

  it('a dangling link is named and leads where its target would be; nothing when no link is on the way', () => {
    const root = path.join(base, 'dangling')
    fs.mkdirSync(root)
    fs.symlinkSync('missing', path.join(root, '.envrc'))
    fs.symlinkSync('gone', path.join(root, '.vscode'))
    expect(linksOnTheWay(path.join(root, '.envrc'), [root], lstat)).toEqual({
      links: [{ path: path.join(root, '.envrc'), target: 'missing' }],
      resolved: path.join(root, 'missing'),
    })
    expect(linksOnTheWay(path.join(root, '.vscode', 'tasks.json'), [root], lstat).resolved).toBe(
      path.join(root, 'gone', 'tasks.json'),
    )
    expect(linksOnTheWay(path.join(base, 'elsewhere', 'x'), [root], lstat)).toEqual({ links: [] })
    expect(linksOnTheWay(path.join(root, 'plain', 'x'), [root], lstat)).toEqual({ links: [] })
  })
})
