// What a cached probe verdict may be trusted for: the programs it names must each be recorded and
// still be that trusted file (a replaced or group-writable one is not), and a usable Landlock
// verdict must carry the kernel's ABI. Real files; the forged cache end to end is in disk-cache.test.ts.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxCapabilities } from '../../../../src/policy/backends.js'
import {
  cachedVerdictProblem,
  programIdentities,
  programsNamed,
} from '../../../../src/sandbox/probe/cached-programs.js'
import { scratchDir } from '../../../support/scratch.js'

const dir = scratchDir('cordon-cached-programs')
fs.chmodSync(dir, 0o755)

function program(name: string, mode = 0o755): string {
  const p = path.join(dir, name)
  fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode })
  fs.chmodSync(p, mode)
  return p
}

const capsNaming = (runner: string, helper?: string, landlockAbi?: number): SandboxCapabilities => ({
  platform: 'linux',
  chain: ['landlock', 'bubblewrap'],
  backends: {
    bubblewrap: { backend: 'bubblewrap', usable: true, executable: runner, limitations: [], probeMs: 0 },
    ...(landlockAbi === undefined
      ? {}
      : { landlock: { backend: 'landlock', usable: true, abi: landlockAbi, limitations: [], probeMs: 0 } }),
  },
  ...(helper === undefined ? {} : { spawnPath: { path: 'native', reason: 'test', helper } }),
})

describe('programsNamed and programIdentities', () => {
  it('names each runner and the helper once, and records a trusted identity for each', () => {
    const runner = program('runner')
    const caps = capsNaming(runner, runner)
    expect(programsNamed(caps)).toEqual([runner])
    expect(programIdentities(caps)?.map((i) => [i.path, i.ino])).toEqual([[runner, fs.statSync(runner).ino]])
  })

  it('records nothing when a named program is not trusted (group-writable)', () => {
    expect(programIdentities(capsNaming(program('loose', 0o775)))).toBeUndefined()
  })
})

describe('cachedVerdictProblem', () => {
  const abi = () => 7

  it('keeps a verdict whose programs are the files recorded and whose ABI is the kernel’s', () => {
    const caps = capsNaming(program('kept'), undefined, 7)
    expect(cachedVerdictProblem(caps, programIdentities(caps), abi)).toBeUndefined()
  })

  it('drops one naming a program not recorded, or recorded as garbage', () => {
    const caps = capsNaming(program('unrecorded'))
    expect(cachedVerdictProblem(caps, undefined, abi)).toMatch(/was not recorded/)
    expect(cachedVerdictProblem(caps, [{ path: programsNamed(caps)[0] }], abi)).toMatch(/was not recorded/)
  })

  it('drops one whose program was replaced, or made group-writable, since', () => {
    const p = program('replaced')
    const caps = capsNaming(p)
    const recorded = programIdentities(caps)
    fs.rmSync(p)
    program('replaced')
    expect(cachedVerdictProblem(caps, recorded, abi)).toMatch(/not the trusted file/)
    const q = program('loosened')
    const capsQ = capsNaming(q)
    const recordedQ = programIdentities(capsQ)
    fs.chmodSync(q, 0o775)
    expect(cachedVerdictProblem(capsQ, recordedQ, abi)).toMatch(/not the trusted file/)
  })

  it('drops a usable Landlock verdict whose ABI is not the kernel’s, or when the kernel cannot be asked', () => {
    const caps = capsNaming(program('abi'), undefined, 3)
    const recorded = programIdentities(caps)
    expect(cachedVerdictProblem(caps, recorded, abi)).toMatch(/ABI 3 is not the kernel's 7/)
    expect(cachedVerdictProblem(caps, recorded, () => undefined)).toMatch(/ABI/)
  })
})
