/**
 * A tunnel's download direction (upstream to the confined client) without a fresh buffer per
 * read: the upstream socket reads into one buffer of its own (`onread`), each chunk is written to
 * the client straight from it, and reading pauses until that write is done (then the buffer is
 * free again). Node's `pipe()` allocates 64 KiB per read and collects it later, which made a
 * download several times slower than a direct one. A connector that ignores `onread` (a test's)
 * gives a socket that emits 'data' instead: the relay takes those chunks the same way.
 */
import type { Socket } from 'node:net'

/** The read buffer of one tunnel's upstream. */
const RELAY_BUFFER_BYTES = 128 * 1024

/** What `net.connect({ onread })` takes. */
export interface OnRead {
  buffer: Buffer
  callback: (bytes: number, buffer: Buffer) => boolean
}

/** One tunnel's download relay: hand `onread` to the upstream's connect, then `start` it. */
export class DownloadRelay {
  private client: Socket | undefined
  private upstream: Socket | undefined
  private onChunk: (() => void) | undefined
  /** Where the upstream's reads go until `start`. */
  readonly onread: OnRead = {
    buffer: Buffer.allocUnsafe(RELAY_BUFFER_BYTES),
    callback: (bytes, buffer) => this.forward(buffer.subarray(0, bytes)),
  }

  /** Relays what `upstream` sends to `client` from now on, calling `onChunk` before each chunk. */
  start(client: Socket, upstream: Socket, onChunk?: () => void): void {
    this.client = client
    this.upstream = upstream
    this.onChunk = onChunk
    upstream.on('data', (chunk: Buffer) => {
      if (!this.forward(chunk)) upstream.pause()
    })
  }

  /** Writes one chunk; false (pause reading) until the client has taken it. */
  private forward(chunk: Buffer): boolean {
    const client = this.client
    const upstream = this.upstream
    if (client === undefined || upstream === undefined || client.destroyed) return false
    this.onChunk?.()
    client.write(chunk, () => {
      if (!upstream.destroyed) upstream.resume()
    })
    return false
  }
}
