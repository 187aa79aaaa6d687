/**
 * createMcpServer: cordon's tools served over MCP by the SDK's low-level Server, one server per
 * connection. Every tool of the set (createBashTools: its `tools`, and `refusals` where the
 * executor confines) is listed with its own JSON Schema, and with an `outputSchema` where
 * src/mcp/output-schema.ts has one. Each tools/call becomes a ToolCall: the request id its call
 * id, one session id per connection, the workspace root its cwd, the request's abort signal its
 * signal (a notifications/cancelled ends the command), and, only when the request carries a
 * progressToken, its output streamed as progress notifications. The strictly-wider retry is asked
 * through elicitation when the client declared it. When the transport closes,
 * src/mcp/disposal.ts ends what the connection started.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import { PACKAGE_ROOT } from '../policy/package-root.js'
import { InMemoryJobs } from '../tool/jobs/in-memory.js'
import type { Jobs } from '../tool/jobs/port.js'
import { type ModelTool, type ToolCall, type ToolResult, toolError } from '../tool/model-tool.js'
import { createBashTools } from '../tool/toolset.js'
import { CallsInFlight, disposeConnection } from './disposal.js'
import { canElicit, ElicitationApproval, REFUSAL_REASONS } from './elicitation.js'
import { checkMcpServerOptions, DEFAULT_APPROVAL_TIMEOUT_MS, type McpServerOptions } from './options.js'
import { callToolResult } from './output-facts.js'
import { outputSchemaOf } from './output-schema.js'
import { ProgressStream } from './progress.js'

export type { McpServerOptions } from './options.js'

/** One connection's server: the SDK server to connect, and its end. */
export interface CordonMcpServer {
  /** The SDK server: connect it to one transport (stdio, in-memory, HTTP…). */
  readonly server: Server
  /** The session id of every call of this connection (its jobs belong to it). */
  readonly sessionId: string
  /** Resolves once the connection closed and everything it started was ended and disposed. */
  readonly disposed: Promise<void>
  /** Closes the connection (or, unconnected, ends it) and resolves once disposed. */
  close(): Promise<void>
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** A Server that learns when its transport closes, whatever the caller sets as `onclose`. */
class ConnectionServer extends Server {
  #onTransportClose: () => void = () => undefined

  /** Calls `hook` when the transport closes (client gone, stdin at EOF, `close()`). */
  whenClosed(hook: () => void): void {
    this.#onTransportClose = hook
  }

  override async connect(transport: Transport): Promise<void> {
    const before = transport.onclose
    // Protocol.connect chains the transport's own onclose before its own: ours runs on every close.
    transport.onclose = () => {
      before?.()
      this.#onTransportClose()
    }
    return super.connect(transport)
  }
}

/** The package's version, for `initialize`. */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return '0.0.0'
  }
}

/** What one tool lists: name, description, its own input schema, and its output schema when it has one. */
function listing(tool: ModelTool) {
  const outputSchema = outputSchemaOf(tool.name)
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema }),
  }
}

/** `result` with the reason its approval was refused, when it was. */
function withReason(result: ToolResult, reason: string | undefined): ToolResult {
  const escalation = result.code === 'ESCALATION_REFUSED' || result.code === 'ESCALATION_UNAVAILABLE'
  return reason !== undefined && result.isError && escalation
    ? { ...result, content: `${result.content}: ${reason}` }
    : result
}

/** Runs one tool call: never throws (a tool's throw is TOOL_FAILED), and sends its last progress before it resolves. */
async function executeTool(tool: ModelTool, args: unknown, call: ToolCall, progress?: ProgressStream) {
  try {
    return await tool.execute(args, call)
  } catch (error) {
    return toolError(`the tool failed: ${error instanceof Error ? error.message : String(error)}`, 'TOOL_FAILED')
  } finally {
    await progress?.finish()
  }
}

/** The progress stream of a request that carries a progressToken, else undefined. */
function progressOf(request: CallToolRequest, extra: Extra): ProgressStream | undefined {
  const token = request.params._meta?.progressToken
  if (token === undefined) return undefined
  return new ProgressStream(token, (params) => extra.sendNotification({ method: 'notifications/progress', params }))
}

/** One connection: its server, its tools (built once the client said what it can), its calls and its end. */
class Connection {
  readonly server: ConnectionServer
  // 16 characters: the whole label of the session's private dirs (src/subprocess/private-dirs/layout.ts).
  readonly sessionId = `mcp-${randomBytes(6).toString('hex')}`
  readonly agent: string
  readonly jobs: Jobs
  readonly workspaceRoot: string
  readonly calls = new CallsInFlight()
  readonly approval: ElicitationApproval
  readonly disposed: Promise<void>
  #resolveDisposed: () => void = () => undefined
  #ending: Promise<void> | undefined
  #set: { tools: readonly ModelTool[]; asks: boolean } | undefined

  constructor(private readonly options: McpServerOptions) {
    this.server = new ConnectionServer(
      { name: options.name ?? 'cordon', version: options.version ?? packageVersion() },
      { capabilities: { tools: {} } },
    )
    this.agent = options.agent ?? 'mcp'
    this.jobs = options.jobs ?? new InMemoryJobs()
    this.workspaceRoot = options.workspaceRoot ?? process.cwd()
    const timeout = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS
    this.approval = new ElicitationApproval(this.server, (callId) => this.calls.requestIdOf(callId), timeout)
    this.disposed = new Promise((resolve) => {
      this.#resolveDisposed = resolve
    })
    this.server.whenClosed(() => void this.end())
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.#toolSet().tools.map(listing) }))
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.#callTool(request, extra))
  }

  /** Ends the connection's jobs and calls, then disposes what it was given; once. */
  end(): Promise<void> {
    const { calls, jobs, sessionId, agent } = this
    this.#ending ??= disposeConnection({
      calls,
      jobs,
      owner: { sessionId, agent },
      dispose: this.options.dispose,
    }).then((failures) => {
      for (const f of failures) this.server.onerror?.(f instanceof Error ? f : new Error(String(f)))
      this.#resolveDisposed()
    })
    return this.#ending
  }

  /** The tool set, built on first use: without approval when the client cannot ask (no escalation hint then). */
  #toolSet(): { tools: readonly ModelTool[]; asks: boolean } {
    if (this.#set !== undefined) return this.#set
    const { name: _n, version: _v, agent: _a, dispose: _d, approvalTimeoutMs: _t, ...toolOptions } = this.options
    const asks = canElicit(this.server)
    const approval = asks ? this.approval : undefined
    const set = createBashTools({ ...toolOptions, jobs: this.jobs, workspaceRoot: this.workspaceRoot, approval })
    // sandbox_refusals beside them where there is a log to read: a confining executor's, or the one given.
    const logged = toolOptions.refusalLog !== undefined || toolOptions.executor.sandboxMode !== undefined
    this.#set = { tools: [...set.tools, ...(logged ? [set.refusals] : [])], asks }
    return this.#set
  }

  async #callTool(request: CallToolRequest, extra: Extra) {
    if (this.#ending !== undefined) throw new McpError(ErrorCode.ConnectionClosed, 'this MCP connection has closed')
    const { tools, asks } = this.#toolSet()
    const tool = tools.find((t) => t.name === request.params.name)
    if (tool === undefined) {
      const served = tools.map((t) => t.name).join(', ')
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool ${JSON.stringify(request.params.name)} (served: ${served})`,
      )
    }
    const callId = String(extra.requestId)
    const progress = progressOf(request, extra)
    const { agent, sessionId, workspaceRoot } = this
    const call: ToolCall = { callId, agent, sessionId, cwd: workspaceRoot, signal: extra.signal }
    if (progress) call.onOutput = (chunk) => progress.push(chunk)
    const args = request.params.arguments ?? {}
    const done = this.calls.run(callId, extra.requestId, () => executeTool(tool, args, call, progress))
    if (done === undefined) throw new McpError(ErrorCode.InvalidRequest, `a tools/call with id ${callId} is running`)
    const result = await done
    const reason = asks ? this.approval.takeReason(callId) : REFUSAL_REASONS.noElicitation
    return callToolResult(tool.name, withReason(result, reason))
  }
}

/** Builds one connection's MCP server over cordon's tools; options are checked first (InvalidRequestError). */
export function createMcpServer(options: McpServerOptions): CordonMcpServer {
  checkMcpServerOptions(options)
  const connection = new Connection(options)
  return {
    server: connection.server,
    sessionId: connection.sessionId,
    disposed: connection.disposed,
    async close() {
      await connection.server.close()
      await connection.end()
    },
  }
}
