// Where a run's cgroups go: the v1 mounts of pids, memory and cpu and the host's own path in each,
// parsed from the kernel's own text, then found on this host (root, cgroup v1) for real.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { cgroupHierarchies, ownPaths, v1Mounts } from '../../../../src/subprocess/cgroup/hierarchy.js'

const MOUNTINFO = [
  '22 26 0:21 / /sys rw,relatime - sysfs sysfs rw',
  '31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '32 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
  '34 30 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '38 30 0:34 /nested /sys/fs/cgroup/my\\040pids rw,relatime - cgroup cgroup rw,pids',
  '40 30 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  '41 30 0:37 / /ro/memory ro,relatime - cgroup cgroup rw,memory',
].join('\n')

describe('cgroup hierarchies', () => {
  it('finds each bound controller’s writable v1 mount (not cpuacct, not v2, escapes undone)', () => {
    expect(v1Mounts(MOUNTINFO)).toEqual({
      cpu: { at: '/sys/fs/cgroup/cpu', root: '/' },
      memory: { at: '/sys/fs/cgroup/memory', root: '/' },
      pids: { at: '/sys/fs/cgroup/my pids', root: '/nested' },
    })
  })

  it("reads the host's own path per controller from /proc/self/cgroup", () => {
    const own = ownPaths('9:name=systemd:/\n8:pids:/a\n4:memory:/process_api/x\n1:cpu,cpuacct:/c\n0::/')
    expect(own).toEqual({ pids: '/a', memory: '/process_api/x', cpu: '/c' })
  })

  const root = process.getuid?.() === 0
  const v1 = fs.existsSync('/sys/fs/cgroup/pids/cgroup.procs') && fs.existsSync('/sys/fs/cgroup/memory/cgroup.procs')
  it.skipIf(!root || !v1)(
    "as root on cgroup v1: the host's own cgroup dir in each hierarchy, where cgroup.procs names this process",
    () => {
      const found = cgroupHierarchies()
      for (const c of ['pids', 'memory', 'cpu'] as const) {
        const dir = found.dirs[c]
        expect(dir, c).toBeDefined()
        const procs = fs.readFileSync(path.join(dir as string, 'cgroup.procs'), 'utf8').split('\n')
        expect(procs, c).toContain(String(process.pid))
      }
    },
  )

  it.skipIf(root)('a non-root host makes no cgroup', () => {
    expect(cgroupHierarchies().dirs).toEqual({})
  })
})
