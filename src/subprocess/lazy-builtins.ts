/**
 * Node builtins that a command's happy path never needs, loaded on first use: `node:child_process`
 * pulls in net, dgram and diagnostics_channel (~3 ms of a CLI start) and serves only the portable
 * spawn path, version probes and terminals; `node:net` (with the stream machinery, ~1.5 ms) serves
 * only pipes a caller reads as streams (collected output is read natively) and `node:tty` needs it.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** `node:child_process`, loaded on the first call. */
export function childProcess(): typeof import('node:child_process') {
  return require('node:child_process') as typeof import('node:child_process')
}

/** `node:net`, loaded on the first call. */
export function net(): typeof import('node:net') {
  return require('node:net') as typeof import('node:net')
}

/** `node:tty`, loaded on the first call. */
export function tty(): typeof import('node:tty') {
  return require('node:tty') as typeof import('node:tty')
}
