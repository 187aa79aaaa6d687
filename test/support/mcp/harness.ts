// The MCP tests' harness: the SDK's own Client against createMcpServer over a linked in-memory
// transport pair (every message each side received or sent recorded), and the facts a disposal
// test checks against the host itself: live processes found by a token in their command line
// (whatever pid namespace they ran in) and cordon's session dirs on disk.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js'
import { type CordonMcpServer, createMcpServer, type McpServerOptions } from '../../../src/mcp/index.js'
import { privateParent } from '../../../src/subprocess/private-dirs/layout.js'
import { alive } from '../subprocess/processes.js'

/** How the test's client answers an elicitation; absent: the client declares no elicitation at all. */
export type Elicit = (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>

/** A connected pair: the SDK client, cordon's server, and what crossed the transport. */
export interface Connected {
  client: Client
  mcp: CordonMcpServer
  clientTransport: InMemoryTransport
  /** Every message the client received, in order. */
  received: JSONRPCMessage[]
  /** Every message the server sent, with the transport options it gave (relatedRequestId). */
  sent: { message: JSONRPCMessage; options: TransportSendOptions | undefined }[]
  /** The elicitation requests the client was asked. */
  elicited: ElicitRequest[]
}

/** createMcpServer(options) connected to a fresh SDK Client that has listed the tools (so it checks every structured result). */
export async function connect(options: McpServerOptions, elicit?: Elicit): Promise<Connected> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  const sent: Connected['sent'] = []
  const send = serverTransport.send.bind(serverTransport)
  serverTransport.send = (message, sendOptions) => {
    sent.push({ message, options: sendOptions })
    return send(message, sendOptions)
  }
  const mcp = createMcpServer(options)
  await mcp.server.connect(serverTransport)
  const client = new Client(
    { name: 'cordon-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  )
  const elicited: ElicitRequest[] = []
  if (elicit)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request)
      return elicit(request)
    })
  await client.connect(clientTransport)
  const received: JSONRPCMessage[] = []
  const onmessage = clientTransport.onmessage
  clientTransport.onmessage = (message, extra) => {
    received.push(message)
    onmessage?.(message, extra)
  }
  await client.listTools()
  return { client, mcp, clientTransport, received, sent, elicited }
}

/** The text of a tools/call result's first content block. */
export function textOf(result: unknown): string {
  const first = (result as { content?: { type: string; text?: string }[] }).content?.[0]
  if (first?.type !== 'text' || first.text === undefined) throw new Error('the result has no text content')
  return first.text
}

/** A token no other process's command line holds: run `sleep TOKEN`, then find that process on the host. */
export function uniqueToken(): string {
  return `${Math.floor(1e6 + Math.random() * 8e6)}.${process.pid}`
}

/** The live (not zombie) host processes running `sleep TOKEN` (the token only a test's command holds). */
export function sleepersOf(token: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    let args: string[]
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0')
    } catch {
      continue
    }
    const sleeper = args.length === 3 && args[0]?.endsWith('sleep') && args[1] === token
    if (sleeper && alive(Number(entry))) pids.push(Number(entry))
  }
  return pids
}

/** cordon's session dirs on disk that belong to host `pid` (`sessions/<pid>-<label>-XXXXXX`). */
export function sessionDirsOf(pid: number, label = ''): string[] {
  const base = join(privateParent(), 'sessions')
  let names: string[]
  try {
    names = readdirSync(base)
  } catch {
    return []
  }
  return names.filter((n) => n.startsWith(`${pid}-${label}`)).map((n) => join(base, n))
}
