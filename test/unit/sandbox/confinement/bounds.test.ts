// What bounds a run on a host: the policy's limits, the defaults where a cgroup can hold them, the
// oom_score_adj always, and each class's verdict (what holds, and why not where it does not).
import { describe, expect, it } from 'vitest'
import {
  CONFINED_OOM_SCORE_ADJ,
  DEFAULT_MEMORY_FRACTION,
  DEFAULT_PROCESS_LIMIT,
  DEFAULT_TEMP_FRACTION,
} from '../../../../src/policy/defaults.js'
import {
  cpuVerdict,
  effectiveLimits,
  type HostBounds,
  memoryVerdict,
  NO_HOST_BOUNDS,
  processesVerdict,
  subprocessBounds,
  sizeText,
  tempVerdict,
  explainedLimits,
} from '../../../../src/sandbox/confinement/bounds.js'

const GIB = 1024 ** 3
const CGROUPS: HostBounds = { cgroups: { pids: true, memory: true, cpu: true }, memsw: true, memory: 8 * GIB }
/** The same host, but one that cannot mount a tmpfs (not root). */
const NO_MOUNT: HostBounds = { ...CGROUPS, tempRefusal: 'the host is not root' }

describe('run bounds', () => {
  it('defaults bound processes, memory and temp only where the host holds them; a policy limit wins', () => {
    expect(effectiveLimits(undefined, CGROUPS)).toEqual({
      processes: DEFAULT_PROCESS_LIMIT,
      memoryBytes: 8 * GIB * DEFAULT_MEMORY_FRACTION,
      tempBytes: 8 * GIB * DEFAULT_TEMP_FRACTION,
    })
    expect(effectiveLimits(undefined, NO_MOUNT)).toEqual({
      processes: DEFAULT_PROCESS_LIMIT,
      memoryBytes: 8 * GIB * DEFAULT_MEMORY_FRACTION,
    })
    expect(effectiveLimits({ processes: 10, memoryBytes: GIB, cpuSeconds: 5, tempBytes: 9 }, CGROUPS)).toEqual({
      processes: 10,
      memoryBytes: GIB,
      cpuSeconds: 5,
      tempBytes: 9,
    })
    expect(effectiveLimits(undefined, NO_HOST_BOUNDS)).toEqual({})
  })

  it('the runtime gets cgroups where the host has them, and the oom_score_adj always', () => {
    expect(subprocessBounds({ processes: 10 }, CGROUPS)).toEqual({
      pids: 10,
      memoryBytes: 4 * GIB,
      cpuGroup: true,
      oomScoreAdj: CONFINED_OOM_SCORE_ADJ,
    })
    expect(subprocessBounds({ processes: 10, memoryBytes: GIB }, NO_HOST_BOUNDS)).toEqual({
      oomScoreAdj: CONFINED_OOM_SCORE_ADJ,
    })
  })

  it('memory: governed by a memory cgroup, else not, and says so either way', () => {
    const held = memoryVerdict(CGROUPS, { memoryBytes: 256 << 20 })
    expect(held.governed).toBe(true)
    expect(held.how).toContain('256 MiB')
    expect(held.how).toContain('memsw')
    const not = memoryVerdict(NO_HOST_BOUNDS, { memoryBytes: 256 << 20 })
    expect(not.governed).toBe(false)
    expect(not.how).toMatch(/^not governed/)
    expect(not.how).toContain('oom_score_adj')
  })

  it('processes: a pids cgroup, else RLIMIT_NPROC, which does not bind uid 0', () => {
    expect(processesVerdict(CGROUPS, { processes: 9 }, true)).toMatchObject({ governed: true })
    expect(processesVerdict(NO_HOST_BOUNDS, { processes: 9 }, true)).toMatchObject({ governed: false })
    expect(processesVerdict(NO_HOST_BOUNDS, { processes: 9 }, false).how).toContain('RLIMIT_NPROC')
  })

  it('cpu: RLIMIT_CPU per process when asked; temp: a tmpfs where the host mounts one, by default too', () => {
    expect(cpuVerdict(CGROUPS, { cpuSeconds: 3 })).toMatchObject({ governed: true })
    expect(cpuVerdict(CGROUPS, { cpuSeconds: 3 }).how).toContain('SIGXCPU after 3 s')
    expect(cpuVerdict(NO_HOST_BOUNDS, undefined).governed).toBe(false)
    expect(tempVerdict(NO_HOST_BOUNDS, { tempBytes: GIB })).toMatchObject({ governed: false })
    expect(tempVerdict(CGROUPS, { tempBytes: GIB }).how).toContain('tmpfs of 1 GiB the host')
    const byDefault = tempVerdict(CGROUPS, undefined)
    expect(byDefault.governed).toBe(true)
    expect(byDefault.how).toContain(`tmpfs of 2 GiB (by default ${DEFAULT_TEMP_FRACTION * 100}% of the host's memory)`)
    expect(tempVerdict(NO_MOUNT, { tempBytes: GIB })).toMatchObject({ governed: false })
    expect(tempVerdict(NO_MOUNT, undefined).how).toMatch(/^not governed: .*\(the host is not root\)/)
  })

  it('explain says every limit: its value (the default marked) and its mechanism or not governed', () => {
    const lines = explainedLimits({ cpuSeconds: 7 }, CGROUPS, true)
    expect(lines.map((l) => l.name)).toEqual(['processes', 'memory', 'temp', 'cpu', 'address space', 'file size'])
    expect(lines[0]).toMatchObject({ value: `${DEFAULT_PROCESS_LIMIT} (default)` })
    expect(lines[1]?.how).toContain('memory cgroup')
    expect(lines[2]).toMatchObject({
      value: '2 GiB (default)',
      how: "one tmpfs holding the session's TMPDIR and /dev/shm (bubblewrap)",
    })
    expect(explainedLimits(undefined, NO_MOUNT, true)[2]).toMatchObject({ value: 'none' })
    expect(explainedLimits(undefined, NO_MOUNT, true)[2]?.how).toMatch(/^not governed: .*the host is not root/)
    expect(explainedLimits({ tempBytes: GIB }, CGROUPS, true)[2]?.how).toContain('tmpfs')
    expect(explainedLimits({ tempBytes: GIB }, NO_HOST_BOUNDS, false)[2]?.how).toMatch(/^not governed/)
    expect(lines[3]).toMatchObject({ value: '7 s' })
    const bare = explainedLimits({ processes: 5, memoryBytes: GIB }, NO_HOST_BOUNDS, true)
    expect(bare[0]?.how).toMatch(/^not governed: RLIMIT_NPROC does not bind uid 0/)
    expect(bare[1]?.how).toMatch(/^not governed/)
  })

  it('sizes read as a person reads them', () => {
    expect(sizeText(GIB)).toBe('1 GiB')
    expect(sizeText(3 << 20)).toBe('3 MiB')
    expect(sizeText(1000)).toBe('1000 bytes')
    expect(sizeText(1.5 * GIB)).toBe('1.5 GiB')
  })
})
