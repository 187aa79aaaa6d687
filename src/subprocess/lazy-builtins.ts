/**
 * Node builtins that a command's happy path never needs, loaded on first use: `node:child_process`
 * pulls in net, dgram and diagnostics_channel (~3 ms of a CLI start) and serves only the portable
 * spawn path, version probes and terminals.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** `node:child_process`, loaded on the first call. */
export function childProcess(): typeof import('node:child_process') {
  return require('node:child_process') as typeof import('node:child_process')
}
