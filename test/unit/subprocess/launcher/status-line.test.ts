// The supervisor's status line, as the host reads it: `started PID`, `error STAGE ERRNO`, then
// `exit N` or `signal N` (native/launch.cc and native/supervisor.cc write exactly these), and
// nothing else.
import os from 'node:os'
import { describe, expect, it } from 'vitest'
import { SPAWN_STAGES } from '../../../../src/policy/spawn-stages.js'
import { parseStatusLine } from '../../../../src/subprocess/launcher/status-line.js'
import { STATUS_FORMATS } from '../../../support/repository/native-stages.js'

describe('parseStatusLine', () => {
  it('reads each line a supervisor writes', () => {
    expect(parseStatusLine('started 4242')).toEqual({ kind: 'started' })
    expect(parseStatusLine('exit 0\n')).toEqual({ kind: 'exit', exit: { exitCode: 0, signal: null } })
    expect(parseStatusLine('exit 7')).toEqual({ kind: 'exit', exit: { exitCode: 7, signal: null } })
    expect(parseStatusLine('signal 9')).toEqual({ kind: 'exit', exit: { exitCode: null, signal: 'SIGKILL' } })
    expect(parseStatusLine(`signal ${os.constants.signals.SIGTERM}`)).toEqual({
      kind: 'exit',
      exit: { exitCode: null, signal: 'SIGTERM' },
    })
    expect(parseStatusLine('error exec 2')).toEqual({ kind: 'error', stage: 'exec', errno: 2 })
  })

  it('every stage of the one list round-trips through an error line', () => {
    for (const stage of SPAWN_STAGES)
      expect(parseStatusLine(`error ${stage} 13`)).toEqual({ kind: 'error', stage, errno: 13 })
  })

  it('every format native code writes is understood', () => {
    const sample = (format: string) => format.replace('%s', 'landlock').replace(/%d/g, '1')
    for (const format of STATUS_FORMATS) expect(parseStatusLine(sample(format)), format).toBeDefined()
  })

  it('anything else is no status: missing or non-numeric fields, unknown words', () => {
    for (const line of [
      '',
      'exit',
      'signal',
      'error landlock',
      'exit seven',
      'signal x',
      'error seccomp EPERM',
      'done 0',
    ])
      expect(parseStatusLine(line), JSON.stringify(line)).toBeUndefined()
  })
})
