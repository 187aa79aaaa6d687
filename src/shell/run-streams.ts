/**
 * What a foreground run streams besides its collected output: a stdin fed from a Readable as the
 * command reads it, and the output decoded for a caller's onOutput as it comes.
 */
import type { Readable, Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { InvalidRequestError } from '../policy/errors.js'
import type { ShellExecSpec } from './types.js'

/** InvalidRequestError when a run is given its stdin twice: as bytes (`spec.stdin`) and as a stream. */
export function checkOneStdin(spec: ShellExecSpec, stream: Readable | undefined): void {
  if (stream !== undefined && spec.stdin !== undefined)
    throw new InvalidRequestError(['stdin: give the bytes (spec.stdin) or a stream (options.stdin), not both'], {
      context: 'cordon: invalid shell request',
    })
}

/**
 * Feeds `source` to a command's stdin as it reads it (backpressure: never more than the pipes
 * hold in memory), ending it at the source's end; returns the stop, which lets go of both (the
 * command is gone: what it did not read is left in `source`).
 */
export function feedStdin(source: Readable, stdin: Writable): () => void {
  const endOnError = () => stdin.end()
  source.on('error', endOnError)
  source.pipe(stdin)
  return () => {
    source.unpipe(stdin)
    source.off('error', endOnError)
    stdin.destroy()
  }
}

/** Decodes chunks per stream (no split UTF-8 characters) and hands them on in arrival order. */
export function streamDecoder(onOutput: (chunk: string, stream: 'stdout' | 'stderr') => void): {
  push: (chunk: Buffer, stream: 'stdout' | 'stderr') => void
  flush: () => void
} {
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') }
  return {
    push(chunk, stream) {
      const text = decoders[stream].write(chunk)
      if (text !== '') onOutput(text, stream)
    },
    flush() {
      for (const stream of ['stdout', 'stderr'] as const) {
        const text = decoders[stream].end()
        if (text !== '') onOutput(text, stream)
      }
    },
  }
}
