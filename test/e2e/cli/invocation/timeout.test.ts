// `--timeout MS`: digits only, 1 to the longest delay a Node timer holds. Above it Node's timer
// overflows to 1 ms: `--timeout 99999999999999 -- sleep 2` was killed at once and reported as
// timed out, `--timeout 3000000000 -- true` said `timedOut: true` with exit 0. Now both are
// refused before anything runs, naming the maximum; the maximum itself runs.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_TIMER_DELAY_MS } from '../../../../src/subprocess/spec/limits.js'
import { scratchDir } from '../../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-timeout')

function cordon(args: string[]) {
  const started = Date.now()
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started }
}

const TOO_LONG = (given: string) =>
  `cordon run: --timeout: ${given} ms is more than a timer can hold: at most ${MAX_TIMER_DELAY_MS} ms (about 24.9 days)\nsee cordon run --help\n`

describe('cordon run --timeout', () => {
  it('the issue\'s two commands are refused, naming the maximum; never "timed out" at once', () => {
    const sleep = cordon(['run', '--timeout', '99999999999999', '--', 'sleep', '2'])
    expect(sleep.status).toBe(125)
    expect(sleep.stderr).toBe(TOO_LONG('99999999999999'))
    const json = cordon(['run', '--json', '--timeout', '3000000000', '--', 'true'])
    expect(json.status).toBe(125)
    const out = JSON.parse(json.stdout) as { error?: { code: string; message: string }; timedOut?: boolean }
    expect(out.timedOut).toBeUndefined()
    expect(out.error).toMatchObject({
      code: 'CORDON_USAGE',
      message: expect.stringContaining(`at most ${MAX_TIMER_DELAY_MS} ms`),
    })
    expect(cordon(['run', '--timeout', '3000000000', '--', 'true']).stderr).toBe(TOO_LONG('3000000000'))
  })

  it('the maximum itself runs: the command ends on its own, not timed out', () => {
    const r = cordon([
      'run',
      '--json',
      '--mode',
      'danger-full-access',
      '--timeout',
      String(MAX_TIMER_DELAY_MS),
      '--',
      'sleep',
      '1',
    ])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: 0, timedOut: false, timeoutMs: MAX_TIMER_DELAY_MS })
    expect(r.ms).toBeGreaterThanOrEqual(1000)
    expect(r.stderr).not.toMatch(/TimeoutOverflowWarning/)
  })

  it('-5, 0, 1.5, abc, 1e3, 0x10 each say what is wrong; nothing runs', () => {
    const marker = join(root, 'ran')
    const run = (value: string) =>
      cordon(['run', '--mode', 'danger-full-access', '--timeout', value, '--', 'touch', marker])
    for (const value of ['-5', '1.5', 'abc', '1e3', '0x10', ' 5', '']) {
      const r = run(value)
      expect(r.status).toBe(125)
      expect(r.stderr.split('\n')[0]).toBe(
        `cordon run: --timeout: "${value}" is not a whole number of milliseconds (digits only, e.g. --timeout 30000)`,
      )
    }
    expect(run('0').stderr.split('\n')[0]).toBe(
      'cordon run: --timeout: must be at least 1 ms (0 would end the command at once)',
    )
    expect(existsSync(marker)).toBe(false)
    // The control: a plain number runs it.
    expect(run('30000').status).toBe(0)
    expect(existsSync(marker)).toBe(true)
  })
})
