// What of a program's output reaches the person's terminal through `cordon run --tty` and
// `cordon shell`: bin/cordon.js (over dist/) on a real pty standing in for the person's terminal.
// A program prints a clipboard write (OSC 52), a DCS string, terminal queries (device status, a
// colour query) and the same in their C1 forms as UTF-8 carries them; the person's screen shows
// none of them, and with --raw-output (the control) every one.
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessTerminalHandle } from '../../../src/subprocess/types.js'
import { scratchDir } from '../../support/scratch.js'
import { describePty, Screen } from '../../support/subprocess/terminal.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-filter')
const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-filter-rt') })
afterAll(() => runtime.dispose())
const opened: SubprocessTerminalHandle[] = []
afterEach(() => Promise.all(opened.splice(0).map((t) => t.terminate())).then(() => undefined))

/** The hostile sequences between the letters A…H, as octal escapes for printf(1). */
const PRINTED = [
  'A',
  '\\033]52;c;cHduZWQ=\\007', // OSC 52: write the clipboard
  'B',
  '\\033P+q544e\\033\\\\', // DCS: a termcap query
  'C',
  '\\033[6n', // device status report: the terminal would type a reply
  'D',
  '\\033]11;?\\007', // background colour query
  'E',
  '\\302\\2336n', // C1 CSI (U+009B) device status report
  'F',
  '\\302\\23552;c;eA==\\302\\234', // C1 OSC 52 ended by C1 ST
  'G',
  '\\302\\220qdcs\\302\\234', // C1 DCS
  // Sequences a terminal restarts (ESC), abandons (CAN) or starts anew (a C1 code) inside another.
  '\\033\\033]52;c;cHduZWQ=\\007', // ESC ESC OSC 52
  '\\033[\\302\\23552;;cHduZWQ=\\007', // ESC [ then a C1 OSC 52
  '\\033[1\\030\\033]0;pwned\\007', // a CSI abandoned by CAN, then a title
  '\\033\\033P$qm\\033\\\\', // ESC ESC DCS DECRQSS: the terminal would type a reply
  'H\\n',
].join('')

/** What the person's screen shows when nothing is filtered (node-pty decodes UTF-8, as a terminal does). */
const RAW = [
  '\x1b]52;c;cHduZWQ=\x07',
  '\x1bP+q544e\x1b\\',
  '\x1b[6n',
  '\x1b]11;?\x07',
  '\u009b6n',
  '\u009d52;c;eA==\u009c',
  '\u0090qdcs\u009c',
  '\x1b\x1b]52;c;cHduZWQ=\x07',
  '\x1b[\u009d52;;cHduZWQ=\x07',
  '\x1b[1\x18\x1b]0;pwned\x07',
  '\x1b\x1bP$qm\x1b\\',
]

/** The person's terminal running `cordon ARGS`; resolves with everything it showed once cordon exited. */
async function person(args: string[]): Promise<string> {
  const quoted = [process.execPath, bin, ...args].map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ')
  const terminal = await runtime.spawnTerminal({
    argv: ['sh', '-c', `exec ${quoted}`],
    cwd: root,
    cols: 100,
    rows: 30,
    graceMs: 2000,
    env: { TERM: 'xterm-256color' },
  })
  opened.push(terminal)
  const screen = new Screen(terminal)
  expect(await terminal.done).toEqual({ exitCode: 0, signal: null })
  await screen.waitFor('H\r\n')
  return screen.text
}

const program = ['--', 'sh', '-c', `printf '${PRINTED}'`]
const verbs = [
  ['cordon run --tty', ['run', '--tty', '--mode', 'danger-full-access']],
  ['cordon shell', ['shell', '--mode', 'danger-full-access']],
] as const

await describePty('a program on a cordon terminal cannot act on the person’s terminal', () => {
  it.each(verbs)('%s drops clipboard writes, DCS strings and queries, C1 forms included', async (_, verb) => {
    const shown = await person([...verb, ...program])
    expect(shown.replaceAll('\x18', '')).toContain('ABCDEFGH\r\n') // the CAN that ended a CSI passes
    for (const sequence of RAW) expect(shown).not.toContain(sequence)
    expect(shown).not.toMatch(/[\x90\x9b\x9d]|52;|pwned|\$qm/)
  })

  it.each(verbs)('%s --raw-output passes every one (the control)', async (_, verb) => {
    const shown = await person([...verb, '--raw-output', ...program])
    for (const sequence of RAW) expect(shown).toContain(sequence)
    expect(shown).toContain('H\r\n')
  })
})
