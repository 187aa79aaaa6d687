// The sandbox-exec argv, pinned: always the absolute /usr/bin/sandbox-exec, -p PROFILE, the -D
// parameters in key order, then -- and the command (so a command word starting with - is the
// command's). Every bad input is listed at once.
import { describe, expect, it } from 'vitest'
import { SANDBOX_EXEC, seatbeltLaunchArgv } from '../../../../src/sandbox/seatbelt/launch.js'
import { invalid } from '../../../support/invalid.js'

const PROFILE = '(version 1)\n(deny default)\n'

describe('seatbeltLaunchArgv', () => {
  it('is sandbox-exec -p PROFILE -- COMMAND', () => {
    expect(seatbeltLaunchArgv({ profile: PROFILE, command: ['/bin/sh', '-c', 'echo hi'] })).toEqual([
      '/usr/bin/sandbox-exec',
      '-p',
      PROFILE,
      '--',
      '/bin/sh',
      '-c',
      'echo hi',
    ])
    expect(SANDBOX_EXEC).toBe('/usr/bin/sandbox-exec')
  })

  it('passes parameters as -D KEY=VALUE in key order, before --; values keep = and newlines', () => {
    expect(
      seatbeltLaunchArgv({ profile: PROFILE, params: { ZED: 'a=b', ALPHA: 'x\ny' }, command: ['-weird', 'arg'] }),
    ).toEqual([SANDBOX_EXEC, '-p', PROFILE, '-D', 'ALPHA=x\ny', '-D', 'ZED=a=b', '--', '-weird', 'arg'])
  })

  it('refuses NUL anywhere, an empty profile or command and bad parameter names, listing every issue', () => {
    const error = invalid(() => seatbeltLaunchArgv({ profile: ' ', params: { 'A=B': 'v', OK: 'x\0' }, command: [] }))
    expect(error.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^profile: .*empty/),
        expect.stringMatching(/^params/),
        expect.stringMatching(/^params\.OK: .*NUL/),
        expect.stringMatching(/^command: .*empty/),
      ]),
    )
    expect(invalid(() => seatbeltLaunchArgv({ profile: PROFILE, command: ['a\0b'] })).issues).toEqual([
      expect.stringMatching(/^command\[0\]: .*NUL/),
    ])
  })
})
