// The host cache dirs `cacheRoots: 'host'` grants: each existing one, but never one that holds,
// is or lies in a place to avoid (cordon's state, the package, a program the host runs): a dir
// holding one is granted around it, child by child (real dirs).
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cacheEnvFor, hostCacheDirs } from '../../../../src/sandbox/view/package-caches.js'
import { scratchDir } from '../../../support/scratch.js'

const home = fs.realpathSync(scratchDir('cordon-host-caches'))
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))
const dir = (p: string) => {
  const d = path.join(home, p)
  fs.mkdirSync(d, { recursive: true })
  return d
}

describe('hostCacheDirs', () => {
  const npx = dir('.npm/_npx/abc/node_modules/cordon')
  const otherNpx = dir('.npm/_npx/def')
  const cacache = dir('.npm/_cacache')
  const pip = dir('.cache/pip')
  const state = dir('.cache/cordon')
  fs.writeFileSync(path.join(home, '.npm', 'top-level-file'), '')

  it('grants every existing cache dir when nothing is to be avoided (the control)', () => {
    const dirs = hostCacheDirs(home, [])
    expect(dirs).toEqual(expect.arrayContaining([path.join(home, '.npm'), pip, state]))
  })

  it('leaves out a place to avoid and what holds it, granting the rest around it', () => {
    const dirs = hostCacheDirs(home, [npx, state])
    expect(dirs).not.toContain(path.join(home, '.npm'))
    expect(dirs).not.toContain(state)
    expect(dirs).toEqual(expect.arrayContaining([cacache, otherNpx, pip]))
    for (const d of dirs) for (const a of [npx, state]) expect(a === d || a.startsWith(`${d}/`)).toBe(false)
  })

  it('grants nothing inside a place to avoid', () => {
    expect(hostCacheDirs(home, [path.join(home, '.npm'), path.join(home, '.cache')])).toEqual([])
  })

  it('grants nothing without a usable home', () => {
    expect(hostCacheDirs(undefined, [])).toEqual([])
    expect(hostCacheDirs('/', [])).toEqual([])
    expect(hostCacheDirs('relative', [])).toEqual([])
  })
})

describe('cacheEnvFor', () => {
  it('points every package manager beneath one dir', () => {
    for (const value of Object.values(cacheEnvFor('/c'))) expect(value.startsWith('/c/')).toBe(true)
  })
})
