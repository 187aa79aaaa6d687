/**
 * The server name (SNI) a TLS client asks for, read from the first bytes of its ClientHello.
 * The proxy holds a CONNECT tunnel's first bytes until this says what they are, so a tunnel
 * opened to an allowed host cannot carry a TLS session named for another (domain fronting).
 * Pure and total: malformed input never throws.
 */

/**
 * What the first bytes of a stream are, as far as TLS goes. `unreadable`: a handshake that opens
 * like TLS but whose ClientHello cannot be read whole (cut short, malformed, interrupted): its
 * server name cannot be judged, so the tunnel refuses it.
 */
export type TlsProbe =
  | { kind: 'need-more' }
  | { kind: 'not-tls' }
  | { kind: 'tls'; serverName?: string; unreadable?: true }

/** The largest ClientHello read (post-quantum key shares make them a few KiB; 64 KiB is far). */
const MAX_HELLO = 64 * 1024

/** The most bytes worth holding: a ClientHello split into small records, with their headers. */
export const TLS_PROBE_LIMIT = 2 * MAX_HELLO

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

const UNREADABLE: TlsProbe = { kind: 'tls', unreadable: true }

/** Whether a handshake record of TLS (version 3.x, a fragment of 1 byte to 16 KiB) starts at `at`. */
function isHandshakeRecord(bytes: Uint8Array, at: number): boolean {
  const length = (bytes[at + 3]! << 8) | bytes[at + 4]!
  return bytes[at] === RECORD_HANDSHAKE && bytes[at + 1] === 3 && length > 0 && length <= 16 * 1024
}

/** What the handshake bytes gathered so far say: the whole hello, why not, or undefined (more needed). */
function judgeGathered(joined: Buffer, firstRecord: boolean): Uint8Array | TlsProbe | undefined {
  if (joined[0] !== HANDSHAKE_CLIENT_HELLO) return firstRecord ? { kind: 'not-tls' } : UNREADABLE
  if (joined.length < 4) return undefined
  const want = 4 + ((joined[1]! << 16) | (joined[2]! << 8) | joined[3]!)
  if (want > MAX_HELLO) return UNREADABLE
  return joined.length >= want ? joined.subarray(0, want) : undefined
}

/**
 * The ClientHello message (handshake header included) gathered from the handshake records that
 * open `bytes`, however it is split; or what stands in the way.
 */
function gatherHello(bytes: Uint8Array): Uint8Array | TlsProbe {
  const parts: Uint8Array[] = []
  let at = 0
  for (;;) {
    if (bytes.length < at + 5) return { kind: 'need-more' }
    // A first record that is not one is some other protocol; a later one, a hello broken off.
    if (!isHandshakeRecord(bytes, at)) return at === 0 ? { kind: 'not-tls' } : UNREADABLE
    const length = (bytes[at + 3]! << 8) | bytes[at + 4]!
    if (bytes.length < at + 5 + length) return { kind: 'need-more' }
    parts.push(bytes.subarray(at + 5, at + 5 + length))
    const judged = judgeGathered(Buffer.concat(parts), at === 0)
    if (judged !== undefined) return judged
    at += 5 + length
  }
}

/** What `bytes` (a stream's first bytes) are: more needed, not TLS, or a ClientHello with its server name if it carries one. */
export function probeTls(bytes: Uint8Array): TlsProbe {
  if (bytes.length === 0) return { kind: 'need-more' }
  if (bytes[0] !== RECORD_HANDSHAKE) return { kind: 'not-tls' }
  const hello = gatherHello(bytes)
  if (!(hello instanceof Uint8Array)) return hello
  try {
    const serverName = serverNameOf(new Reader(hello, 4, hello.length))
    return serverName === undefined ? { kind: 'tls' } : { kind: 'tls', serverName }
  } catch {
    // A ClientHello that runs past its own bounds: its name cannot be judged.
    return UNREADABLE
  }
}
