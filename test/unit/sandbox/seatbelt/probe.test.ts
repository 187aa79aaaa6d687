// The Seatbelt probe. Off macOS it says "macOS-only" and "unverified". Its verdicts are checked
// here with stand-in sandbox-exec scripts (platform forced to darwin): one that does not confine
// (the canary must catch it), one that refuses to apply a profile, one that hangs, and one that
// behaves as a confining sandbox-exec would (files as the host expects, EPERM text). The real
// canary runs only on macOS (skipped elsewhere).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { probeSeatbelt } from '../../../../src/sandbox/seatbelt/probe.js'
import { scratchDir } from '../../../support/scratch.js'

const bin = scratchDir('cordon-seatbelt-fakes')

/** An executable stand-in for sandbox-exec; every one skips `-p PROFILE [-D ..] --` first. */
function fake(name: string, body: string): string {
  const file = path.join(bin, name)
  fs.writeFileSync(file, `#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done\nshift\n${body}\n`)
  fs.chmodSync(file, 0o755)
  return file
}

const UNCONFINED = fake('unconfined', 'exec "$@"')
const REFUSING = fake('refusing', 'echo "sandbox-exec: sandbox_apply: Operation not permitted" >&2\nexit 71')
const HANGING = fake('hanging', 'sleep 30')
// $1=/bin/sh $2=-c $3=script $4=cordon-canary $5=dir [$6=temp dir]: the files a confined canary leaves.
const CONFINING = fake(
  'confining',
  'if [ -n "$6" ]; then echo ok > "$6/ok"; else echo ok > "$5/root/ok"; fi\necho "sh: $5/denied: Operation not permitted" >&2\nexit 0',
)

describe('probeSeatbelt', () => {
  it.skipIf(process.platform === 'darwin')(
    'off macOS: unusable, macOS-only, unverified, and never throws',
    async () => {
      const cap = await probeSeatbelt()
      expect(cap).toMatchObject({ backend: 'seatbelt', usable: false, verified: false })
      expect(cap.reason).toMatch(/macOS-only \(this is linux\)/)
      expect(cap.reason).toMatch(/unverified/)
      expect(cap.limitations[0]).toMatch(/^unverified/)
      expect(cap.remedy).toMatch(/landlock or bubblewrap/)
      expect(cap.probeMs).toBeGreaterThanOrEqual(0)
    },
  )

  it('darwin without an executable sandbox-exec: unusable, with the remedy', async () => {
    const cap = await probeSeatbelt({ platform: 'darwin', sandboxExec: path.join(bin, 'missing') })
    expect(cap).toMatchObject({ usable: false, verified: false })
    expect(cap.reason).toMatch(/is refused: cannot be examined \(ENOENT\)/)
    expect(cap.remedy).toMatch(/\/usr\/bin\/sandbox-exec/)
  })

  it('a sandbox-exec in a directory others may write is refused and never run; run by path it runs', async () => {
    const open = scratchDir('cordon-seatbelt-open')
    const marker = path.join(scratchDir('cordon-seatbelt-marker'), 'ran')
    const planted = path.join(open, 'sandbox-exec')
    fs.writeFileSync(planted, `#!/bin/sh\necho ran >> ${marker}\n`, { mode: 0o755 })
    fs.chmodSync(open, 0o777)
    const cap = await probeSeatbelt({ platform: 'darwin', sandboxExec: planted })
    expect(cap).toMatchObject({ usable: false, refusedPrograms: [{ path: planted }] })
    expect(cap.reason).toMatch(/is refused: .* is writable by others/)
    expect(fs.existsSync(marker)).toBe(false)
    spawnSync(planted) // the control: the plant runs when run by its path
    expect(fs.existsSync(marker)).toBe(true)
  })

  it('a sandbox-exec that does not confine is caught by the canary', async () => {
    const cap = await probeSeatbelt({ platform: 'darwin', sandboxExec: UNCONFINED })
    expect(cap).toMatchObject({ usable: false, verified: false, executable: UNCONFINED })
    expect(cap.reason).toMatch(/NOT denied a write outside its grant/)
    expect(cap.remedy).toMatch(/Do not rely on Seatbelt/)
  })

  it('a sandbox-exec that refuses the profile is reported with its own line', async () => {
    const cap = await probeSeatbelt({ platform: 'darwin', sandboxExec: REFUSING })
    expect(cap.usable).toBe(false)
    expect(cap.reason).toMatch(/refused to apply the profile \(sandbox-exec: sandbox_apply: Operation not permitted\)/)
    expect(cap.remedy).toMatch(/inside another sandbox/)
  })

  it('a canary that hangs is ended within the budget', async () => {
    const started = Date.now()
    const cap = await probeSeatbelt({ platform: 'darwin', sandboxExec: HANGING, timeoutMs: 300 })
    expect(cap.usable).toBe(false)
    expect(cap.reason).toMatch(/did not finish within 300 ms/)
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('a sandbox-exec that behaves as a confining one: usable, verified, partial in every mode', async () => {
    const cap = await probeSeatbelt({ platform: 'darwin', sandboxExec: CONFINING })
    expect(cap).toMatchObject({ usable: true, verified: true, denialText: true })
    expect(cap.enforcement).toEqual({
      'read-only': { inherit: 'partial', deny: 'partial' },
      'workspace-write': { inherit: 'partial', deny: 'partial' },
    })
    expect(cap.governs!['workspace-write']).toEqual(['content', 'names', 'metadata', 'network', 'signals'])
    expect(cap.limitations.join('\n')).not.toMatch(/unverified/)
    expect(cap.remedy).toMatch(/partial in every mode/)
  })

  // Needs macOS: the real canary under /usr/bin/sandbox-exec.
  it.skipIf(process.platform !== 'darwin')('macOS: the real canary is refused what it must be', async () => {
    const cap = await probeSeatbelt()
    expect(cap.reason).toBeUndefined()
    expect(cap).toMatchObject({ usable: true, verified: true, denialText: true })
    expect(cap.probeMs).toBeLessThan(2000)
  })
})
