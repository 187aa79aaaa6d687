// A usage mistake, as a person makes it on every verb: one line `cordon VERB: what is wrong` and
// one line `see cordon VERB --help` on stderr, nothing on stdout, exit 125, nothing run (the help
// itself is not printed). And the top-level `-V` / `--version`.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_TIMER_DELAY_MS } from '../../../../src/subprocess/spec/limits.js'
import { scratchDir } from '../../../support/scratch.js'

const repo = join(import.meta.dirname, '..', '..', '..', '..')
const bin = join(repo, 'bin', 'cordon.js')
const root = scratchDir('cordon-usage')

function cordon(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Runs `args`, expects a usage error of `who`, and returns its one line (without `who: `). */
function usageLine(who: string, args: string[]): string {
  const r = cordon(args)
  expect(r.status, r.stderr).toBe(125)
  expect(r.stdout).toBe('')
  const lines = r.stderr.split('\n')
  expect(lines, r.stderr).toHaveLength(3)
  expect(lines[0]).toMatch(new RegExp(`^${who}: `))
  expect(lines[1]).toBe(`see ${who} --help`)
  expect(lines[2]).toBe('')
  return (lines[0] as string).slice(who.length + 2)
}

describe('usage errors', () => {
  it('run: an unknown flag (with the one meant), a value left out, a missing command, a bad enum; nothing runs', () => {
    const marker = join(root, 'ran')
    const touch = ['--mode', 'danger-full-access', '--', 'touch', marker]
    expect(usageLine('cordon run', ['run', '--bogus', ...touch])).toBe('unknown option --bogus')
    expect(usageLine('cordon run', ['run', '--timout', '5', ...touch])).toBe(
      'unknown option --timout (did you mean --timeout?)',
    )
    expect(usageLine('cordon run', ['run', '--mode', 'danger-full-access', 'touch', marker, '-la'])).toBe(
      `unknown option -la; the command goes after --, as in: -- touch ${marker} -la`,
    )
    expect(usageLine('cordon run', ['run', '--timeout'])).toBe('--timeout needs a value')
    expect(usageLine('cordon run', ['run', '--root', ...touch])).toBe(
      '--root needs a value, but the next word is --mode',
    )
    expect(usageLine('cordon run', ['run', '--mode', 'danger-full-access', '--timeout', '--', 'touch', marker])).toBe(
      '--timeout needs a value, but the next word is the -- that starts the command',
    )
    expect(usageLine('cordon run', ['run', '--json=yes', ...touch])).toBe('--json takes no value (got --json=yes)')
    expect(usageLine('cordon run', ['run', '--mode', 'danger-full-access'])).toMatch(
      /^give the command after --, e\.g\. cordon run -- ls -la, or as one string: cordon run -c 'ls -la'$/,
    )
    expect(usageLine('cordon run', ['run', '--mode', 'yolo', '--', 'true'])).toBe(
      '--mode: unknown mode "yolo" (read-only, workspace-write, danger-full-access)',
    )
    expect(usageLine('cordon run', ['run', '--network', 'some', '--', 'true'])).toBe(
      '--network: must be inherit or deny, got "some"',
    )
    expect(existsSync(marker)).toBe(false)
  })

  it('shell, explain, probe and schema: the same form, their own name', () => {
    expect(usageLine('cordon shell', ['shell', '--bogus'])).toBe('unknown option --bogus')
    expect(usageLine('cordon shell', ['shell', '--backend', 'chroot'])).toBe(
      '--backend: unknown backend "chroot" (landlock, bubblewrap, seatbelt)',
    )
    expect(usageLine('cordon explain', ['explain', '--mod', 'read-only'])).toBe(
      'unknown option --mod (did you mean --mode?)',
    )
    expect(usageLine('cordon explain', ['explain', 'ls'])).toMatch(/^runs nothing and takes no command \(got "ls"\)/)
    expect(usageLine('cordon probe', ['probe', '--mode', 'read-only'])).toBe('unknown option --mode')
    expect(usageLine('cordon probe', ['probe', 'now'])).toBe('takes no arguments, got "now"')
    expect(usageLine('cordon schema', ['schema'])).toBe('name the output to describe (run), e.g. cordon schema run')
    expect(usageLine('cordon schema', ['schema', 'shell'])).toBe('no schema for "shell" (run)')
  })

  it('the top level: an unknown verb or option names what there is', () => {
    expect(usageLine('cordon', ['frobnicate'])).toMatch(
      /^unknown verb "frobnicate" \(run, shell, probe, explain, schema/,
    )
    expect(usageLine('cordon', ['--bogus'])).toBe('unknown option --bogus (-V, --version, -h, --help)')
  })

  it('under --json the same mistake is one JSON error on stdout, exit 125', () => {
    const r = cordon(['run', '--json', '--timeout', '-5', '--', 'true'])
    expect(r.status).toBe(125)
    expect(JSON.parse(r.stdout)).toEqual({
      error: {
        name: 'UsageError',
        code: 'CORDON_USAGE',
        message: '--timeout: "-5" is not a whole number of milliseconds (digits only, e.g. --timeout 30000)',
      },
    })
  })
})

describe('the version and the help', () => {
  it('-V, --version and -v print cordon and the version in package.json', () => {
    const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }
    for (const flag of ['-V', '--version', '-v']) {
      const r = cordon([flag])
      expect(r.status).toBe(0)
      expect(r.stdout).toBe(`cordon ${version}\n`)
    }
    expect(cordon(['--help']).stdout).toMatch(/-V, --version/)
  })

  it("run's help names -c and --timeout's range; cordon help VERB prints that verb's help", () => {
    const help = cordon(['run', '--help']).stdout
    expect(help).toMatch(/^ {2}-c, --command STRING {3}run STRING as a bash command, as it is/m)
    expect(help).toContain(
      `--timeout MS       kill the command after MS milliseconds: digits, 1 to ${MAX_TIMER_DELAY_MS}`,
    )
    expect(help).toContain('cordon schema run')
    expect(cordon(['help', 'run']).stdout).toBe(help)
  })
})
