// One run's leaves on this host, for real (root, cgroup v1): made with their limits before anything
// joins, their cgroup.procs open for the command, gone again once removed.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { cgroupHierarchies } from '../../../../src/subprocess/cgroup/hierarchy.js'
import { controllersOf, RunCgroup, stuckCgroups } from '../../../../src/subprocess/cgroup/leaf.js'
import { eventually } from '../../../support/subprocess/processes.js'

const dirs = cgroupHierarchies().dirs
const usable = dirs.pids !== undefined && dirs.memory !== undefined && dirs.cpu !== undefined

describe('run cgroups', () => {
  it('travel in one order: pids, memory, cpu (only those asked for)', () => {
    expect(controllersOf({ cpuGroup: true, memoryBytes: 1, pids: 2 })).toEqual(['pids', 'memory', 'cpu'])
    expect(controllersOf({ memoryBytes: 1 })).toEqual(['memory'])
    expect(controllersOf(undefined)).toEqual([])
  })

  it.skipIf(!usable)('a leaf per controller with its limit, an open cgroup.procs each, all removed after', async () => {
    const cg = RunCgroup.create({ pids: 77, memoryBytes: 64 << 20, cpuGroup: true })
    const fds = [...cg.fds]
    expect(fds).toHaveLength(3)
    const leaves = fds.map((fd) => path.dirname(fs.readlinkSync(`/proc/self/fd/${fd}`)))
    expect(leaves[0]?.startsWith(dirs.pids as string)).toBe(true)
    expect(leaves[0]).toMatch(new RegExp(`/cordon-${process.pid}/\\d+$`))
    expect(fs.readFileSync(path.join(leaves[0] as string, 'pids.max'), 'utf8').trim()).toBe('77')
    expect(Number(fs.readFileSync(path.join(leaves[1] as string, 'memory.limit_in_bytes'), 'utf8'))).toBe(64 << 20)
    expect(cg.facts()).toEqual({ pidsHit: false, memoryHit: false })
    cg.remove()
    // The host's copies are closed at once (a spare made later may reuse the numbers).
    for (const fd of fds) expect(() => fs.fstatSync(fd)).toThrow()
    await eventually(() => leaves.every((leaf) => !fs.existsSync(leaf as string)), 2000)
    for (const leaf of leaves) expect(fs.existsSync(leaf as string)).toBe(false)
    expect(stuckCgroups()).toEqual([])
  })

  it.skipIf(usable)('without a writable hierarchy, a bound fails at the cgroup stage and nothing is left', () => {
    expect(() => RunCgroup.create({ pids: 10 })).toThrow(expect.objectContaining({ stage: 'cgroup' }))
  })
})
