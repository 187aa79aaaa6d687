// Which bwrap the host runs: configured (option, else CORDON_BWRAP) and checked with no fallback,
// else the trusted search path's; and the check every run makes that it is still that file.
// Real files and modes (the suite runs as root; uid 65534 stands in for another user).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BWRAP_ENV, bwrapProblem, chooseBwrap, configuredBwrap } from '../../../../src/sandbox/bubblewrap/program.js'
import { checkTrustedProgram, identityFacts } from '../../../../src/subprocess/trusted-program.js'

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bwrap-program-')))
fs.chmodSync(base, 0o755)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

/** A fresh dir under base holding an executable `bwrap` script. */
function planted(label: string, dirMode = 0o755): string {
  const dir = path.join(base, label)
  fs.mkdirSync(dir)
  const file = path.join(dir, 'bwrap')
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n')
  fs.chmodSync(file, 0o755)
  fs.chmodSync(dir, dirMode)
  return file
}

describe('configuredBwrap', () => {
  it('takes the option first, then CORDON_BWRAP; an empty value is none', () => {
    expect(configuredBwrap({ bwrap: '/a/bwrap' }, { [BWRAP_ENV]: '/b/bwrap' })).toBe('/a/bwrap')
    expect(configuredBwrap(undefined, { [BWRAP_ENV]: '/b/bwrap' })).toBe('/b/bwrap')
    expect(configuredBwrap({}, { [BWRAP_ENV]: '' })).toBeUndefined()
    expect(configuredBwrap(undefined, { PATH: '/anything' })).toBeUndefined()
  })
})

describe('chooseBwrap', () => {
  it('without a configured path takes the trusted search path, never PATH', () => {
    const choice = chooseBwrap(undefined)
    if (!fs.existsSync('/usr/bin/bwrap')) {
      expect(choice.identity).toBeUndefined()
      return
    }
    expect(choice.identity?.path).toMatch(/^\/(usr\/)?s?bin\/bwrap$/)
  })

  it('takes a configured file that passes the check (the control of the refusals below)', () => {
    const file = planted('fine')
    expect(chooseBwrap(file)).toMatchObject({ identity: { path: file }, refused: [] })
  })

  it('refuses a configured file in a directory others may write, reports it, and does not fall back', () => {
    const file = planted('open', 0o777)
    const choice = chooseBwrap(file)
    expect(choice.identity).toBeUndefined()
    expect(choice).toMatchObject({
      untrusted: true,
      refused: [{ path: file, reason: expect.stringMatching(/writable by others/) }],
    })
    expect('reason' in choice && choice.reason).toMatch(/the configured bwrap .* is refused/)
  })

  it('refuses a configured file owned by another user', () => {
    const file = planted('theirs')
    fs.chownSync(file, 65534, 65534)
    expect(chooseBwrap(file)).toMatchObject({ refused: [{ reason: expect.stringMatching(/owned by uid 65534/) }] })
  })

  it('a configured path that is not there is missing, not untrusted (the install remedy applies)', () => {
    expect(chooseBwrap(path.join(base, 'none', 'bwrap'))).toMatchObject({ untrusted: false })
  })
})

describe('bwrapProblem', () => {
  it('passes the file the probe checked, and names one replaced or opened up since', () => {
    const file = planted('swap')
    const trust = checkTrustedProgram(file)
    if (!trust.ok) throw new Error(trust.reason)
    const cap = { executable: file, executableIdentity: identityFacts(trust.identity) }
    expect(bwrapProblem(cap as never)).toBeUndefined()
    fs.rmSync(file)
    fs.writeFileSync(file, '#!/bin/sh\necho another\n', { mode: 0o755 })
    expect(bwrapProblem(cap as never)).toMatch(/was replaced since the probe checked it/)
    fs.chmodSync(path.dirname(file), 0o777)
    expect(bwrapProblem(cap as never)).toMatch(/is refused: .*writable by others/)
  })

  it('checks afresh a verdict without identity, and names a missing executable', () => {
    expect(bwrapProblem({ executable: planted('afresh') } as never)).toBeUndefined()
    expect(bwrapProblem({ executable: planted('afresh-open', 0o777) } as never)).toMatch(/is refused/)
    expect(bwrapProblem({} as never)).toMatch(/recorded no bwrap/)
  })
})
