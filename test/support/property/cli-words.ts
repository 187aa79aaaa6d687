/**
 * Command lines for `cordon`, built so that whatever parses runs only a harmless command: a flag's
 * value follows only a flag that takes one, a bare word goes only where it is an error (or holds a
 * NUL byte, which no program name can), and the command itself is `true`, `exit 3` or one that
 * cannot run. The rest is as odd as test/support/property/odd-values.ts makes it.
 */
import { PassThrough, Readable } from 'node:stream'
import fc from 'fast-check'
import { POLICY_OPTIONS } from '../../../src/cli/policy-options.js'
import type { CliIo } from '../../../src/cli/main.js'
import { oddString, PROTOTYPE_KEYS } from './odd-values.js'

/** The verbs, and the words `cordon` itself knows. */
export const VERBS = ['run', 'shell', 'explain', 'probe', 'schema', 'mcp'] as const
const TOP_WORDS = ['help', '-h', '--help', '-V', '-v', '--version']

/** run's options beyond the policy flags (src/cli/run.ts), but -c, which the command part gives. */
const RUN_OPTIONS = { timeout: { type: 'string' }, tty: { type: 'boolean' }, 'raw-output': { type: 'boolean' } }

const POLICY = POLICY_OPTIONS as Record<string, { type: string }>
const flagsOf = (type: string, extra: Record<string, { type: string }> = {}) =>
  Object.entries({ ...POLICY, ...extra })
    .filter(([name, o]) => o.type === type && name !== 'help')
    .map(([name]) => name)

/** Values a flag could be given: its real ones and odd ones. */
const flagValue = fc.oneof(
  fc.constantFrom(
    'read-only',
    'workspace-write',
    'danger-full-access',
    'inherit',
    'deny',
    'bubblewrap',
    'landlock',
    'seatbelt',
    'scrubbed',
    'minimal',
    'example.com',
    '*.example.com',
    '10.0.0.1:443',
    '512M',
    '2G',
    '100',
    '0',
    '1.5',
    '4294967296',
    'PATH',
    'HOME=1',
  ),
  oddString,
)

/** A word that is neither a flag nor a value: only an error where it lands (or unrunnable). */
const strayWord = oddString.filter((w) => !w.startsWith('-'))
/** A word no program can be named by. */
const unrunnable = oddString.map((w) => `${w}\0`)

/** Every long option name some verb knows (an unknown flag must be none of them). */
const KNOWN = new Set([...Object.keys(POLICY), ...Object.keys(RUN_OPTIONS), 'command', 'c', 'm', 'h', 'version'])
/** A long flag no verb knows, of an odd name (never `--` itself, the end of the options). */
const unknownFlag = oddString.filter((f) => f !== '' && !KNOWN.has(f.split('=')[0] as string)).map((f) => `--${f}`)

/** Segments every verb may meet: known flags with odd values, flags misused, unknown and prototype flags. */
function flagSegment(verb: string): fc.Arbitrary<string[]> {
  const extra: Record<string, { type: string }> =
    verb === 'run' ? RUN_OPTIONS : verb === 'shell' ? { 'raw-output': { type: 'boolean' } } : {}
  const strings = flagsOf('string', extra)
  const booleans = flagsOf('boolean', extra)
  return fc.oneof(
    fc.tuple(fc.constantFrom(...strings), flagValue).map(([f, v]) => [`--${f}`, v]),
    fc.tuple(fc.constantFrom(...strings), flagValue).map(([f, v]) => [`--${f}=${v}`]),
    fc.constantFrom(...strings).map((f) => [`--${f}`]),
    fc.constantFrom(...booleans).map((f) => [`--${f}`]),
    fc.tuple(fc.constantFrom(...booleans), flagValue).map(([f, v]) => [`--${f}=${v}`]),
    flagValue.map((v) => ['-m', v]),
    fc.constantFrom(...PROTOTYPE_KEYS).map((k) => [`--${k}`]),
    fc.tuple(unknownFlag, flagValue).map(([f, v]) => [f, v]),
    fc.constantFrom<string[]>(
      ['-x'],
      ['-xc'],
      ['---'],
      ['-mread-only'],
      ['-m=deny'],
      ['--json'],
      ['--help=1'],
      ['--mode='],
    ),
  )
}

/** Weighs `valid` (a harmless command that runs: a process or a terminal each) light against `refused`. */
function rarelyRuns(valid: fc.Arbitrary<string[]>, refused: fc.Arbitrary<string[]>): fc.Arbitrary<string[]> {
  return fc.oneof({ arbitrary: valid, weight: 1 }, { arbitrary: refused, weight: 8 })
}

/** The command part of `run`: none, `-c` (harmless, empty or unrunnable), or words after `--`. */
const runCommand: fc.Arbitrary<string[]> = rarelyRuns(
  fc.constantFrom<string[]>(
    ['-c', 'true'],
    ['-c', 'exit 3'],
    ['--command=true'],
    ['--', 'true'],
    ['--', 'bash', '-c', 'exit 3'],
  ),
  fc.oneof(
    fc.constantFrom<string[]>([], ['--'], ['-c', ''], ['-c', '   '], ['--command='], ['-c', 'true', '--', 'true']),
    unrunnable.map((c) => ['-c', c]),
    unrunnable.map((w) => ['--', w]),
    fc.tuple(unrunnable, fc.array(flagValue, { maxLength: 2 })).map(([w, rest]) => ['--', w, ...rest]),
  ),
)

/** The program part of `shell`: none (its $SHELL, which the test makes `true`), `true`, or an unrunnable one. */
const shellCommand: fc.Arbitrary<string[]> = rarelyRuns(
  fc.constantFrom<string[]>([], ['--', 'true']),
  fc.oneof(
    unrunnable.map((w) => ['--', w]),
    unrunnable.map((w) => [w]),
  ),
)

/** The words after the verb, the command part last. */
function verbWords(verb: string): fc.Arbitrary<string[]> {
  const flags = fc.array(flagSegment(verb), { maxLength: 4 }).map((s) => s.flat())
  if (verb === 'run') return fc.tuple(flags, runCommand).map(([f, c]) => [...f, ...c])
  if (verb === 'shell') return fc.tuple(flags, shellCommand).map(([f, c]) => [...f, ...c])
  // No other verb runs a command: a stray word anywhere is one of its usage errors. Without one,
  // explain, probe and mcp may probe, plan or serve: the costly case, so the rarer one.
  const stray = rarelyRuns(fc.constant([]), fc.array(fc.oneof(strayWord, unrunnable), { minLength: 1, maxLength: 2 }))
  return fc.tuple(flags, stray).map(([f, s]) => [...f, ...s])
}

/** A first word that is no verb (never one by chance: its words would then run). */
const notAVerb = fc
  .oneof(strayWord, fc.constantFrom(...PROTOTYPE_KEYS))
  .filter((w) => !(VERBS as readonly string[]).includes(w))

/** One `cordon` command line (without node and the script). */
export const cliArgv: fc.Arbitrary<string[]> = fc.oneof(
  { arbitrary: fc.constantFrom(...VERBS).chain((verb) => verbWords(verb).map((w) => [verb, ...w])), weight: 8 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom(...TOP_WORDS), fc.array(strayWord, { maxLength: 2 }))
      .map(([w, r]) => [w, ...r]),
    weight: 1,
  },
  { arbitrary: fc.tuple(notAVerb, fc.array(strayWord, { maxLength: 1 })).map(([w, r]) => [w, ...r]), weight: 1 },
)

/**
 * Fake CLI streams, none a terminal, keeping what was written. stdin stays open (a person who
 * types nothing), but for `mcp`, whose client has gone: the server ends with its input.
 */
export function fakeCliIo(verb: string | undefined): CliIo & { out: () => string; err: () => string } {
  const collect = () => {
    const chunks: string[] = []
    const stream = new PassThrough()
    stream.on('data', (c: Buffer) => chunks.push(c.toString()))
    return { stream, text: () => chunks.join('') }
  }
  const stdout = collect()
  const stderr = collect()
  return {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: verb === 'mcp' ? Readable.from([]) : new PassThrough(),
    out: stdout.text,
    err: stderr.text,
  }
}
