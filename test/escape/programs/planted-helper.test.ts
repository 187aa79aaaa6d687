// A planted cordon-exec never runs as the host: a package whose build dir others may write (or
// whose helper another user owns) has no helper the host will run, and the probes and launchers
// say it was refused. The control runs the very plant by its path and sees its marker written,
// and the same layout with safe modes is found.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REMEDY_BUILD_HELPER, REMEDY_UNTRUSTED_PROGRAM } from '../../../src/policy/remedies.js'
import { helperLookup, helperMissingReason, helperVerdict } from '../../../src/subprocess/native.js'
import { scratchDir } from '../../support/scratch.js'

/** A package root whose build/Release/cordon-exec writes `marker` when it runs. */
function packageWithHelper(marker: string, releaseMode: number, owner?: number): { root: string; helper: string } {
  const root = scratchDir('cordon-planted-helper')
  fs.chmodSync(root, 0o755)
  const release = path.join(root, 'build', 'Release')
  fs.mkdirSync(release, { recursive: true })
  fs.chmodSync(path.join(root, 'build'), 0o755)
  const helper = path.join(release, 'cordon-exec')
  fs.writeFileSync(helper, `#!/bin/sh\necho "$*" >> ${marker}\n`, { mode: 0o755 })
  if (owner !== undefined) fs.chownSync(helper, owner, owner)
  fs.chmodSync(release, releaseMode)
  return { root, helper }
}

describe('the cordon-exec helper', () => {
  it('in a build dir others may write: refused with the reason, never run; run by path it runs', () => {
    const marker = path.join(scratchDir('cordon-helper-marker'), 'ran')
    const { root, helper } = packageWithHelper(marker, 0o777)
    const lookup = helperLookup(root)
    expect(lookup.path).toBeUndefined()
    expect(lookup.refused).toEqual([{ path: helper, reason: `${path.dirname(helper)} is writable by others` }])
    expect(helperMissingReason(root)).toMatch(/the cordon-exec helper is refused: \S+cordon-exec: .*writable by others/)
    expect(helperVerdict(root)).toMatchObject({
      usable: false,
      remedy: REMEDY_UNTRUSTED_PROGRAM,
      refusedPrograms: [{ path: helper }],
    })
    expect(fs.existsSync(marker)).toBe(false)
    spawnSync(helper, ['zygote'])
    expect(fs.readFileSync(marker, 'utf8')).toBe('zygote\n')
  })

  it('owned by another user: refused', () => {
    const marker = path.join(scratchDir('cordon-helper-marker'), 'ran')
    const { root } = packageWithHelper(marker, 0o755, 65534)
    expect(helperLookup(root).refused[0]?.reason).toMatch(/owned by uid 65534/)
    expect(fs.existsSync(marker)).toBe(false)
  })

  it('the same layout with safe modes is the helper (the control of the refusals)', () => {
    const marker = path.join(scratchDir('cordon-helper-marker'), 'ran')
    const { root, helper } = packageWithHelper(marker, 0o755)
    expect(helperLookup(root)).toEqual({ path: helper, refused: [] })
    expect(helperMissingReason(path.join(root, 'none'))).toBe('the cordon-exec helper was not built')
    expect(helperVerdict(path.join(root, 'none'))).toEqual({
      usable: false,
      reason: 'the cordon-exec helper was not built',
      remedy: REMEDY_BUILD_HELPER,
    })
  })
})
