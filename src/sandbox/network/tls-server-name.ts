/**
 * The server name (SNI) a TLS client asks for, read from the first bytes of its ClientHello.
 * The proxy holds a CONNECT tunnel's first bytes until this says what they are, so a tunnel
 * opened to an allowed host cannot carry a TLS session named for another (domain fronting).
 * Pure and total: malformed input never throws.
 */

/** What the first bytes of a stream are, as far as TLS goes. */
export type TlsProbe = { kind: 'need-more' } | { kind: 'not-tls' } | { kind: 'tls'; serverName?: string }

/** The most bytes worth holding: one TLS record (16 KiB) and its 5-byte header. */
export const TLS_PROBE_LIMIT = 16 * 1024 + 5

const RECORD_HANDSHAKE = 0x16
const HANDSHAKE_CLIENT_HELLO = 1
const EXTENSION_SERVER_NAME = 0
const NAME_TYPE_HOST = 0

/** A bounds-checked reader: every read past the end throws, caught once in `probeTls`. */
class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    private at: number,
    private readonly end: number,
  ) {}
  u8(): number {
    if (this.at + 1 > this.end) throw new RangeError('short')
    return this.bytes[this.at++]!
  }
  u16(): number {
    return (this.u8() << 8) | this.u8()
  }
  u24(): number {
    return (this.u8() << 16) | this.u16()
  }
  skip(n: number): void {
    if (this.at + n > this.end) throw new RangeError('short')
    this.at += n
  }
  /** A reader over the next `n` bytes, which this one skips. */
  sub(n: number): Reader {
    const inner = new Reader(this.bytes, this.at, this.at + n)
    this.skip(n)
    return inner
  }
  text(n: number): string {
    const start = this.at
    this.skip(n)
    return Buffer.from(this.bytes.subarray(start, start + n)).toString('latin1')
  }
  get left(): number {
    return this.end - this.at
  }
}

/** The host_name in a server_name extension's body, if one is there. */
function hostNameOf(body: Reader): string | undefined {
  const list = body.sub(body.u16())
  while (list.left > 0) {
    const type = list.u8()
    const length = list.u16()
    if (type === NAME_TYPE_HOST) return list.text(length)
    list.skip(length)
  }
  return undefined
}

/** The server name in a ClientHello body (after the 4-byte handshake header). */
function serverNameOf(hello: Reader): string | undefined {
  hello.skip(2 + 32) // client_version, random
  hello.skip(hello.u8()) // session_id
  hello.skip(hello.u16()) // cipher_suites
  hello.skip(hello.u8()) // compression_methods
  if (hello.left === 0) return undefined // a hello without extensions names no server
  const extensions = hello.sub(hello.u16())
  while (extensions.left > 0) {
    const type = extensions.u16()
    const body = extensions.sub(extensions.u16())
    if (type === EXTENSION_SERVER_NAME) return hostNameOf(body)
  }
  return undefined
}

/** What `bytes` (a stream's first bytes) are: more needed, not TLS, or a ClientHello with its server name if it carries one. */
export function probeTls(bytes: Uint8Array): TlsProbe {
  if (bytes.length === 0) return { kind: 'need-more' }
  if (bytes[0] !== RECORD_HANDSHAKE) return { kind: 'not-tls' }
  if (bytes.length < 5) return { kind: 'need-more' }
  // TLS record versions are 3.x; anything else opened with 0x16 is some other protocol.
  if (bytes[1] !== 3) return { kind: 'not-tls' }
  const recordLength = (bytes[3]! << 8) | bytes[4]!
  if (recordLength === 0 || recordLength > TLS_PROBE_LIMIT - 5) return { kind: 'not-tls' }
  if (bytes.length < 5 + recordLength) return { kind: 'need-more' }
  const record = new Reader(bytes, 5, 5 + recordLength)
  try {
    if (record.u8() !== HANDSHAKE_CLIENT_HELLO) return { kind: 'not-tls' }
    // A ClientHello split over several records is read only as far as the first one goes.
    const helloLength = Math.min(record.u24(), record.left)
    const serverName = serverNameOf(record.sub(helloLength))
    return serverName === undefined ? { kind: 'tls' } : { kind: 'tls', serverName }
  } catch {
    // A handshake record whose ClientHello runs past its bounds: TLS, but no name can be read.
    // The caller then passes it on as a nameless hello (the server will reject it anyway).
    return { kind: 'tls' }
  }
}
