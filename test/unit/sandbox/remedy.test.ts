// The remedy printed for a denied write: the narrowest flag that really allows it, checked against
// the roots cordon accepts, or none at all.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeRemedy } from '../../../src/sandbox/remedy.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-remedy'))
const root = path.join(base, 'root')
const other = path.join(base, 'other')
fs.mkdirSync(root)
fs.mkdirSync(path.join(other, 'cache'), { recursive: true })
fs.writeFileSync(path.join(other, 'file'), 'x')
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
const policy = { mode: 'read-only' as const, workspaceRoot: root }

describe('writeRemedy', () => {
  it('inside the root: workspace-write alone', () => {
    expect(writeRemedy(policy, [path.join(root, 'a', 'b')])).toEqual({ writableRoots: [], unreachable: [] })
  })

  it("outside: the existing dir that holds it, in one step (a file's own dir, a missing path's nearest ancestor)", () => {
    expect(writeRemedy(policy, [path.join(other, 'file')]).writableRoots).toEqual([other])
    expect(writeRemedy(policy, [path.join(other, 'cache', 'tmp', 'x', 'y')]).writableRoots).toEqual([
      path.join(other, 'cache'),
    ])
    // Two paths under one remedy root: one flag.
    expect(writeRemedy(policy, [path.join(other, 'cache', 'p'), path.join(other, 'cache', 'q')]).writableRoots).toEqual(
      [path.join(other, 'cache')],
    )
  })

  it("never cordon's own state (a plan refuses it): a write in the private parent gets no remedy", () => {
    const parent = path.join(other, 'state')
    fs.mkdirSync(path.join(parent, 'sub'), { recursive: true })
    const saved = process.env.CORDON_PRIVATE_DIR
    process.env.CORDON_PRIVATE_DIR = parent
    try {
      expect(writeRemedy(policy, [path.join(parent, 'sub', 'probe.json')])).toEqual({
        writableRoots: [],
        unreachable: [path.join(parent, 'sub', 'probe.json')],
      })
    } finally {
      if (saved === undefined) delete process.env.CORDON_PRIVATE_DIR
      else process.env.CORDON_PRIVATE_DIR = saved
    }
    // The control: the same dir is a remedy once it is not cordon's.
    expect(writeRemedy(policy, [path.join(parent, 'sub', 'probe.json')]).writableRoots).toEqual([
      path.join(parent, 'sub'),
    ])
  })

  it('never /, a system dir, the host temp dir or the home dir: no remedy at all', () => {
    for (const p of ['/etc/x', '/usr/y', '/tmp/z', '/newdir/a', `${process.env.HOME}/x`]) {
      const r = writeRemedy(policy, [p])
      expect(r.writableRoots).toEqual([])
      expect(r.unreachable).toEqual([p])
    }
  })
})
