/**
 * SOCKS5 (RFC 1928) on the proxy's listener: the no-authentication method and the CONNECT
 * command only. A domain name is resolved by the proxy (after the allow-list has passed it);
 * an IPv4 or IPv6 address is a literal the list decides like any host.
 */
import type { Socket } from 'node:net'
import { type RunScope, reach } from './destination.js'
import { DownloadRelay } from './download-relay.js'
import { runTunnel } from './tunnel.js'

const VERSION = 0x05
const METHOD_NONE = 0x00
const METHOD_UNACCEPTABLE = 0xff
const COMMAND_CONNECT = 0x01
const ATYP_IPV4 = 0x01
const ATYP_DOMAIN = 0x03
const ATYP_IPV6 = 0x04

/** SOCKS5 reply codes the proxy answers with. */
export const SocksReply = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const

/** A greeting and request together never need more than this (255 methods; a 255-byte name). */
const HANDSHAKE_LIMIT = 2 + 255 + 4 + 1 + 255 + 2

type Parsed<T> = { need: 'more' } | { bad: number } | { value: T; used: number }

/** The client's greeting: whether it offers no-authentication. */
function parseGreeting(bytes: Buffer): Parsed<boolean> {
  if (bytes.length < 2) return { need: 'more' }
  if (bytes[0] !== VERSION) return { bad: SocksReply.generalFailure }
  const count = bytes[1]!
  if (bytes.length < 2 + count) return { need: 'more' }
  return { value: bytes.subarray(2, 2 + count).includes(METHOD_NONE), used: 2 + count }
}

/** The address text of an IPv6 address's 16 bytes. */
function ipv6Text(bytes: Buffer): string {
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16))
  return groups.join(':')
}

/** The client's request: the host and port it asks to reach. */
function parseRequest(bytes: Buffer): Parsed<{ host: string; port: number }> {
  if (bytes.length < 5) return { need: 'more' }
  if (bytes[0] !== VERSION) return { bad: SocksReply.generalFailure }
  if (bytes[1] !== COMMAND_CONNECT) return { bad: SocksReply.commandNotSupported }
  const type = bytes[3]
  let start = 4
  let length: number
  if (type === ATYP_IPV4) length = 4
  else if (type === ATYP_IPV6) length = 16
  else if (type === ATYP_DOMAIN) {
    length = bytes[4]!
    start = 5
  } else return { bad: SocksReply.addressTypeNotSupported }
  const used = start + length + 2
  if (bytes.length < used) return { need: 'more' }
  const raw = bytes.subarray(start, start + length)
  let host: string
  if (type === ATYP_IPV4) host = [...raw].join('.')
  else if (type === ATYP_IPV6) host = ipv6Text(raw)
  else host = raw.toString('latin1')
  return { value: { host, port: bytes.readUInt16BE(start + length) }, used }
}

/** A reply with the given code and an all-zero bound address (the client has no use for ours). */
function reply(code: number): Buffer {
  return Buffer.from([VERSION, code, 0x00, ATYP_IPV4, 0, 0, 0, 0, 0, 0])
}

/** Serves one SOCKS5 client whose first bytes are `first` (the proxy has read them). */
export function serveSocks5(scope: RunScope, client: Socket, first: Buffer, idleMs: number): void {
  let held = first
  let greeted = false
  const fail = (code: number) => {
    client.removeListener('data', onData)
    client.end(reply(code))
  }
  const step = () => {
    if (!greeted) {
      const greeting = parseGreeting(held)
      if ('need' in greeting) return
      if ('bad' in greeting) return client.destroy()
      if (!greeting.value) {
        client.removeListener('data', onData)
        return client.end(Buffer.from([VERSION, METHOD_UNACCEPTABLE]))
      }
      greeted = true
      held = held.subarray(greeting.used)
      client.write(Buffer.from([VERSION, METHOD_NONE]))
    }
    const request = parseRequest(held)
    if ('need' in request) return
    if ('bad' in request) return fail(request.bad)
    client.removeListener('data', onData)
    client.pause()
    // Nothing here should throw; if it does, this client's socket ends, never the host process.
    connectFor(scope, client, request.value, held.subarray(request.used), idleMs).catch(() => client.destroy())
  }
  const onData = (chunk: Buffer) => {
    held = Buffer.concat([held, chunk])
    if (held.length > HANDSHAKE_LIMIT) return client.destroy()
    step()
  }
  client.on('data', onData)
  step()
}

/** Reaches the requested destination and answers: a tunnel on success, a reply code otherwise. */
async function connectFor(
  scope: RunScope,
  client: Socket,
  target: { host: string; port: number },
  head: Buffer,
  idleMs: number,
): Promise<void> {
  const relay = new DownloadRelay()
  const result = await reach(scope, target.host, target.port, relay.onread)
  if (result.kind === 'refused') return void client.end(reply(SocksReply.notAllowed))
  if (result.kind === 'unreachable') {
    const code = result.step === 'resolve' ? SocksReply.hostUnreachable : SocksReply.connectionRefused
    return void client.end(reply(code))
  }
  if (client.destroyed) return void result.socket.destroy()
  client.write(reply(SocksReply.succeeded))
  runTunnel(scope, { client, upstream: result.socket, host: result.host, port: target.port, head, idleMs, relay })
}
