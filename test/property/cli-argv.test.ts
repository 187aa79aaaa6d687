// The `cordon` command line under 10,000 odd argvs, in process (src/cli/main.ts:main with fake
// streams): it never throws, exits with a status, reports a failure as one typed error that names
// a word of the argv, shows no raw control character, and starts no process for an argv it refuses.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/main.js'
import { displayShellWord } from '../../src/cli/shell-quote.js'
import { displayLine, holdsRawControl } from '../../src/policy/display-text.js'
import { cliArgv, fakeCliIo, VERBS } from '../support/property/cli-words.js'
import { PROPERTY_RUNS, PROPERTY_TIMEOUT_MS, prototypeIsClean } from '../support/property/odd-values.js'
import { processStarts, spyOnProcessStarts, startsSince } from '../support/property/spawn-spy.js'

vi.mock(import('../../src/subprocess/native.js'), async (original) =>
  (await import('../support/property/spawn-spy.js')).spyingNative(await original()),
)

const state = mkdtempSync(join(tmpdir(), 'cordon-cli-property-'))

beforeAll(() => {
  spyOnProcessStarts()
  // No user config, probe verdict or config record of this host's: the test's own.
  vi.stubEnv('XDG_CONFIG_HOME', join(state, 'config'))
  vi.stubEnv('CORDON_PRIVATE_DIR', join(state, 'private'))
  // `cordon shell` without a program runs $SHELL: a harmless one.
  vi.stubEnv('SHELL', 'true')
})
afterAll(() => {
  vi.unstubAllEnvs()
  rmSync(state, { recursive: true, force: true })
})

/** Codes of the errors a refused argv may end in: cordon's own, each a class with a code. */
const REFUSALS = new Set(['CORDON_USAGE', 'INVALID_REQUEST', 'CONFIG_INVALID', 'CONFIG_WIDENED', 'CORDON_CWD_GONE'])
/** Codes of failures that may come after a probe (which starts canaries). */
const AFTER_PROBE = new Set(['SANDBOX_UNAVAILABLE', 'STATE_IN_GRANT', 'ROOT_CHANGED'])

/** The error main reported: from the JSON line under --json, else from the stderr lines. */
function reported(json: boolean, out: string, err: string): { code: string | undefined; message: string } {
  if (json) {
    const parsed = JSON.parse(out.trim().split('\n').at(-1) as string) as { error: { code: string; message: string } }
    return { code: parsed.error.code, message: parsed.error.message }
  }
  const usage = /\nsee cordon( \w+)? --help\n$/.test(err)
  return { code: usage ? 'CORDON_USAGE' : undefined, message: err }
}

/** The policy field a path flag fills: src/policy/resolve.ts names that field when it refuses the path. */
const FIELD_OF_FLAG: Readonly<Record<string, string>> = {
  // And the short flags, which messages name by their long form (or the long, by its short).
  '-m': '--mode',
  '-c': '--command',
  '--command': '-c',
  '--root': 'workspaceRoot',
  '--writable': 'writableRoots',
  '--hide': 'hiddenPaths',
  '--show': 'hiddenDefaults',
  '--protect': 'protectedPaths',
  '--unprotect': 'unprotectedPaths',
  '--allow-socket': 'allowUnixSockets',
}

/** Messages about the command line's shape, which no single word is wrong in. */
const SHAPE = /give the command after --|name the output to describe/

/**
 * Whether `message` names what is wrong: a word of `argv` after the verb (a flag by its name, a
 * value or word as shown), the word that is no verb, or the shape of the command line.
 */
function namesAWord(message: string, argv: readonly string[]): boolean {
  const text = message.replace(/^cordon( \w+)?: /, '').replace(/\nsee cordon( \w+)? --help\n$/, '')
  if (SHAPE.test(text)) return true
  const words = VERBS.includes(argv[0] as (typeof VERBS)[number]) ? argv.slice(1) : argv.slice(0, 1)
  // An inline value (`--config=FILE`) is a word of its own.
  const all = words.flatMap((w) => (/^--[^=]+=/.test(w) ? [w, w.slice(w.indexOf('=') + 1)] : [w]))
  return all.some((word) => {
    const flag = /^(--?[^=]+)/.exec(word)?.[1]
    const shown = displayLine(word)
    if (flag !== undefined && text.includes(displayLine(flag))) return true
    const field = flag === undefined ? undefined : FIELD_OF_FLAG[flag]
    if (field !== undefined && text.includes(field)) return true
    if (text.includes(displayShellWord(word).slice(0, 300))) return true
    // A file flag's value, as the path it names (`--config ''` is the current directory).
    if (text.includes(JSON.stringify(resolve(word)))) return true
    return shown === '' ? text.includes('""') : text.includes(shown.slice(0, 300))
  })
}

describe('the cordon CLI under odd argvs', () => {
  it(
    'returns a status, reports a typed error naming a word, and starts nothing for an argv it refuses',
    async () => {
      await fc.assert(
        fc.asyncProperty(cliArgv, fc.boolean(), async (words, asJson) => {
          const argv = asJson && words.length > 0 ? [words[0] as string, '--json', ...words.slice(1)] : words
          const io = fakeCliIo(argv[0])
          const before = processStarts()
          const status = await main(argv, io)
          const started = startsSince(before)
          expect(Number.isInteger(status) && status >= 0 && status <= 255).toBe(true)
          expect(prototypeIsClean()).toBe(true)
          expect(holdsRawControl(io.err())).toBe(false)
          if (status !== 125) return
          const json = argv.slice(1, argv.indexOf('--') < 0 ? undefined : argv.indexOf('--')).includes('--json')
          const error = reported(json, io.out(), io.err())
          expect(holdsRawControl(error.message)).toBe(false)
          if (json) expect([...REFUSALS, ...AFTER_PROBE]).toContain(error.code)
          if (error.code !== undefined && REFUSALS.has(error.code)) {
            expect(started, error.message).toEqual([])
            expect(namesAWord(error.message, argv), error.message).toBe(true)
          }
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it('the spy sees what a harmless run starts (so its silence above means nothing started)', async () => {
    const before = processStarts()
    expect(await main(['run', '--json', '-c', 'true'], fakeCliIo('run'))).toBe(0)
    expect(startsSince(before).length).toBeGreaterThan(0)
  })
})
