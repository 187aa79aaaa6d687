// Progress messages: the tail of the output within a bound, every control but the newline and the
// tab shown as a visible escape (a client's UI cannot be driven by a command's escapes), output
// coalesced into one notification per interval, nothing sent after finish().
import { describe, expect, it } from 'vitest'
import {
  MAX_PROGRESS_MESSAGE,
  type ProgressParams,
  ProgressStream,
  progressMessage,
} from '../../../src/mcp/progress.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'

describe('progressMessage', () => {
  it('keeps plain text, newlines and tabs as they are', () => {
    expect(progressMessage('a\tb\nc d\n')).toBe('a\tb\nc d\n')
  })

  it('shows escapes, carriage returns, bidi overrides and invisible characters as visible text', () => {
    const shown = progressMessage('\x1b]0;pwned\x07\r\u202egood\u200b\x9b2J')
    expect(shown).toBe('\\x1b]0;pwned\\x07\\r\\u202egood\\u200b\\x9b2J')
    expect(holdsRawControl(shown)).toBe(false)
  })

  it('keeps the tail within the bound and says how much it left out', () => {
    const text = `${'a'.repeat(10_000)}END`
    const shown = progressMessage(text, 100)
    expect(shown.length).toBeLessThanOrEqual(100)
    expect(shown).toMatch(/^…\[\d+ characters not shown\]…a+END$/)
    const left = Number(/\[(\d+) characters/.exec(shown)![1])
    expect(left + shown.length - (shown.indexOf(']…') + 2)).toBe(text.length)
  })

  it('bounds the escaped text, not the raw text, and never splits an escape or a surrogate pair', () => {
    const shown = progressMessage('\x1b'.repeat(5000) + '😀'.repeat(10), MAX_PROGRESS_MESSAGE)
    expect(shown.length).toBeLessThanOrEqual(MAX_PROGRESS_MESSAGE)
    expect(shown.endsWith('😀'.repeat(10))).toBe(true)
    expect(shown.slice(shown.indexOf(']…') + 2, -20)).toMatch(/^(\\x1b)+$/)
  })
})

describe('ProgressStream', () => {
  function recorder() {
    const sent: ProgressParams[] = []
    return { sent, send: async (p: ProgressParams) => void sent.push(p) }
  }

  it('coalesces chunks into one notification per interval, progress growing, in order', async () => {
    const { sent, send } = recorder()
    const stream = new ProgressStream('tok', send, 50)
    for (let i = 0; i < 100; i++) stream.push(`${i}\n`)
    await new Promise((r) => setTimeout(r, 120))
    stream.push('late\n')
    await stream.finish()
    expect(sent).toHaveLength(2)
    expect(sent.map((p) => p.progressToken)).toEqual(['tok', 'tok'])
    expect(sent[0]!.message.split('\n')).toHaveLength(101)
    expect(sent[1]).toMatchObject({ message: 'late\n' })
    expect(sent[1]!.progress).toBeGreaterThan(sent[0]!.progress)
  })

  it('sends nothing for no output, and nothing after finish()', async () => {
    const { sent, send } = recorder()
    const stream = new ProgressStream(7, send, 10)
    await stream.finish()
    stream.push('after\n')
    await new Promise((r) => setTimeout(r, 40))
    expect(sent).toEqual([])
  })

  it('a failing send (a closed transport) is swallowed; later notifications still go', async () => {
    let calls = 0
    const stream = new ProgressStream(
      't',
      async () => {
        calls++
        throw new Error('Not connected')
      },
      5,
    )
    stream.push('a')
    await new Promise((r) => setTimeout(r, 30))
    stream.push('b')
    await expect(stream.finish()).resolves.toBeUndefined()
    expect(calls).toBe(2)
  })
})
