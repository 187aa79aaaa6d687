// What a foreground run streams: output decoded per stream without splitting a character, a stdin
// fed from a stream and let go of when the run is over, and one stdin at most.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { checkOneStdin, feedStdin, streamDecoder } from '../../../src/shell/run-streams.js'

describe('streamDecoder', () => {
  it('hands on whole characters per stream, in arrival order, and flushes what is left', () => {
    const seen: string[] = []
    const decoder = streamDecoder((chunk, stream) => seen.push(`${stream}:${chunk}`))
    const euro = Buffer.from('€', 'utf8')
    decoder.push(euro.subarray(0, 1), 'stdout')
    decoder.push(Buffer.from('e'), 'stderr')
    decoder.push(euro.subarray(1), 'stdout')
    decoder.push(Buffer.from([0xe2]), 'stderr')
    decoder.flush()
    expect(seen).toEqual(['stderr:e', 'stdout:€', 'stderr:\ufffd'])
  })
})

describe('feedStdin', () => {
  it('pipes the source to stdin, and the stop lets go of both', async () => {
    const source = new PassThrough()
    const stdin = new PassThrough()
    const got: Buffer[] = []
    stdin.on('data', (b: Buffer) => got.push(b))
    const stop = feedStdin(source, stdin)
    source.write('abc')
    await new Promise((r) => setImmediate(r))
    expect(Buffer.concat(got).toString()).toBe('abc')
    stop()
    expect(stdin.destroyed).toBe(true)
    expect(source.listenerCount('error')).toBe(0)
  })
})

describe('checkOneStdin', () => {
  it('refuses bytes and a stream together', () => {
    const spec = { command: 'cat', workdir: '/', timeoutMs: 1, stdoutMaxBytes: 1, sandboxPolicy: undefined }
    expect(() => checkOneStdin({ ...spec, stdin: 'x' }, new PassThrough())).toThrow('not both')
    expect(() => checkOneStdin(spec, new PassThrough())).not.toThrow()
  })
})
