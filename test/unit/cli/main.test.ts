// The CLI's dispatch and its failure report, in process: a message that quotes what the person typed
// reaches the terminal escaped (a flag's value, a config's entry name), as one line naming it.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { type CliIo, main } from '../../../src/cli/main.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'

/** Runs `cordon argv` with streams that keep what was written. */
async function cordon(...argv: string[]): Promise<{ status: number; out: string; err: string }> {
  const text = (stream: PassThrough) => {
    const chunks: string[] = []
    stream.on('data', (c: Buffer) => chunks.push(c.toString()))
    return () => chunks.join('')
  }
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out = text(stdout)
  const err = text(stderr)
  const io: CliIo = { stdout, stderr, stdin: new PassThrough() }
  const status = await main(argv, io)
  return { status, out: out(), err: err() }
}

describe('cordon main', () => {
  it('a flag value with controls is named escaped, never written raw', async () => {
    for (const [flag, value] of [
      ['--mode', '\x1b]0;owned\x07'],
      ['--backend', 'x\x1b[2J'],
      ['--environment', '\u202eevil'],
      ['--network', 'a\rb'],
    ] as const) {
      const { status, err } = await cordon('explain', flag, value)
      expect(status).toBe(125)
      expect(err).toMatch(new RegExp(`^cordon explain: ${flag}: `))
      expect(holdsRawControl(err), err).toBe(false)
    }
  })

  it('a message from below the flags (a JSON-quoted entry name) is escaped too, as JSON output is', async () => {
    // resolvePolicy quotes an unknown --show entry with JSON.stringify, which leaves U+202E raw.
    const text = await cordon('explain', '--show', 'a\u202eb')
    expect(text.err).toContain('\\u202e')
    expect(holdsRawControl(text.err)).toBe(false)
    const json = await cordon('explain', '--json', '--show', 'a\u202eb')
    const error = (JSON.parse(json.out) as { error: { code: string; message: string } }).error
    expect(error.code).toBe('CORDON_USAGE')
    expect(holdsRawControl(error.message)).toBe(false)
  })

  it('mcp names the first stray word, escaped, as the other verbs do', async () => {
    const { status, err } = await cordon('mcp', '\x1b[31m', 'b')
    expect(status).toBe(125)
    expect(err).toBe(
      'cordon mcp: mcp: takes no command (the client sends them), got "\\x1b[31m"\nsee cordon mcp --help\n',
    )
  })

  it('a program word with a NUL byte is a usage error naming it, for run and shell', async () => {
    expect(await cordon('run', '--', 'a\0b')).toMatchObject({
      status: 125,
      err: "cordon run: the command's word $'a\\x00b' holds a NUL byte, which no command can take\nsee cordon run --help\n",
    })
    expect(await cordon('shell', '--', 'a\0b')).toMatchObject({
      status: 125,
      err: "cordon shell: the program's word $'a\\x00b' holds a NUL byte, which no command can take\nsee cordon shell --help\n",
    })
  })
})
