// The CLI's word parsing: parseArgs reads, parseWords judges, and each mistake is one line naming
// the flag and what was expected (parseArgs' own strict mode calls `--timeout -5` "ambiguous").
import { describe, expect, it } from 'vitest'
import { type CliOptions, closestOption, parseWords } from '../../../../src/cli/invocation/parse.js'

const OPTIONS: CliOptions = {
  mode: { type: 'string', short: 'm' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  writable: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
}

/** The UsageError message `args` give (to a verb that takes a command with `takes.command`). */
function mistakeOf(args: string[], takes: { command?: boolean } = {}): string {
  try {
    parseWords(args, OPTIONS, takes)
  } catch (error) {
    expect(error).toMatchObject({ name: 'UsageError', code: 'CORDON_USAGE' })
    return (error as Error).message
  }
  throw new Error(`no UsageError for ${JSON.stringify(args)}`)
}
const mistake = (...args: string[]) => mistakeOf(args)

describe('parseWords', () => {
  it('reads values, lists, flags and the words after --', () => {
    expect(
      parseWords(['-m', 'read-only', '--writable', 'a', '--writable=b', '--json', '--', 'ls', '-la'], OPTIONS),
    ).toEqual({
      values: { mode: 'read-only', writable: ['a', 'b'], json: true },
      positionals: ['ls', '-la'],
    })
  })

  it('a value may start with one dash: --timeout -5 reaches the check of --timeout', () => {
    expect(parseWords(['--timeout', '-5', '--', 'true'], OPTIONS).values.timeout).toBe('-5')
    expect(parseWords(['--timeout=--', 'x'], OPTIONS).values.timeout).toBe('--')
  })

  it('an unknown option, with the known one it most likely meant', () => {
    expect(mistake('--bogus')).toBe('unknown option --bogus')
    expect(mistake('--timout', '5')).toBe('unknown option --timout (did you mean --timeout?)')
    expect(mistake('--time', '5')).toBe('unknown option --time (did you mean --timeout?)')
    expect(mistake('--jsno')).toBe('unknown option --jsno (did you mean --json?)')
    expect(mistake('--mode=x', '--nope=1')).toBe('unknown option --nope')
    expect(mistake('-x')).toBe('unknown option -x')
    // A short group is one word: shown whole, not cut at its `=` (which left `-` alone).
    expect(mistake('-=x')).toBe('unknown option -=x')
    expect(mistake('-x=1')).toBe('unknown option -x=1')
  })

  it("an option after the command's first word: the command goes after -- (for a verb that runs one)", () => {
    expect(mistakeOf(['ls', '-la', 'a b'], { command: true })).toBe(
      "unknown option -la; the command goes after --, as in: -- ls -la 'a b'",
    )
    // A verb that takes no command: the option alone, with the one it most likely meant.
    expect(mistakeOf(['run', '--jsno'])).toBe('unknown option --jsno (did you mean --json?)')
  })

  it('a value left out: at the end, before the next option, or before --', () => {
    expect(mistake('--mode')).toBe('--mode needs a value')
    expect(mistake('--mode', '--json')).toBe('--mode needs a value, but the next word is --json')
    expect(mistake('-m', '-h')).toBe('-m needs a value, but the next word is -h')
    expect(mistake('--timeout', '--', 'true')).toBe(
      '--timeout needs a value, but the next word is the -- that starts the command',
    )
  })

  it('a value given to a flag that takes none', () => {
    expect(mistake('--json=yes')).toBe('--json takes no value (got --json=yes)')
  })

  it('shows a word with terminal controls escaped', () => {
    expect(mistake('--\x1b[2Jx')).toBe('unknown option --\\x1b[2Jx')
  })
})

describe('closestOption', () => {
  it('a unique prefix of three letters or more, or one typo away (two for long names: a swap is one); else none', () => {
    expect(closestOption('tim', OPTIONS)).toBe('timeout')
    expect(closestOption('mdoe', OPTIONS)).toBe('mode')
    expect(closestOption('mod', OPTIONS)).toBe('mode')
    expect(closestOption('writabel', OPTIONS)).toBe('writable')
    expect(closestOption('x', OPTIONS)).toBeUndefined()
    expect(closestOption('frobnicate', OPTIONS)).toBeUndefined()
  })
})
