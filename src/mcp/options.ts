/**
 * What createMcpServer accepts, checked with zod at the boundary: the bash tools' options
 * (src/tool/bash-tool-options.ts) but `approval`, which the server makes itself from MCP
 * elicitation, and what a server needs of its own. Every wrong, missing or unknown field is named
 * in one InvalidRequestError, never found out at the first call.
 */
import { InvalidRequestError, isInvalidRequestError } from '../policy/errors.js'
import { onDemand, zod } from '../policy/schema/zod-on-demand.js'
import { type BashToolOptions, checkBashToolOptions } from '../tool/bash-tool-options.js'

/** Something to dispose when the client goes away: a function, or an object with `dispose()`. */
export type McpDisposable = (() => unknown) | { dispose(): unknown }

/** Options of createMcpServer. */
export interface McpServerOptions extends Omit<BashToolOptions, 'approval'> {
  /** The server's name in `initialize` (default `cordon`). */
  name?: string | undefined
  /** The server's version in `initialize` (default the package's). */
  version?: string | undefined
  /** The agent every call belongs to (`ToolCall.agent`; approvals are routed by it); default `mcp`. */
  agent?: string | undefined
  /** Disposed once the connection closed and its jobs and calls ended (e.g. the sandbox the executor uses). */
  dispose?: McpDisposable | undefined
  /** How long a person may take to answer an approval, in ms (default 10 minutes); then it is refused. */
  approvalTimeoutMs?: number | undefined
}

/** The options createMcpServer adds to the bash tools' own. */
export const MCP_OPTION_NAMES = ['name', 'version', 'agent', 'dispose', 'approvalTimeoutMs'] as const

/** The default approval timeout: a person reads the prompt, it is not a machine's round trip. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60 * 1000

const mcpFields = onDemand(() => {
  const { z } = zod()
  const text = z.string({ error: 'must be a string' }).min(1, 'must not be empty')
  const disposable = z.custom<McpDisposable>(
    (v) =>
      typeof v === 'function' ||
      (typeof v === 'object' && v !== null && typeof (v as { dispose?: unknown }).dispose === 'function'),
    { error: 'must be a function or an object with dispose()' },
  )
  return z.object({
    name: text.optional(),
    version: text.optional(),
    agent: text.optional(),
    dispose: disposable.optional(),
    approvalTimeoutMs: z
      .number({ error: 'must be a number of ms' })
      .int('must be a whole number of ms')
      .positive('must be positive')
      .max(2 ** 31 - 1, 'must be at most 2147483647 (a timer cannot wait longer)')
      .optional(),
  })
})

/** Throws InvalidRequestError naming every bad, missing or unknown option (the bash tools' ones included). */
export function checkMcpServerOptions(options: unknown): asserts options is McpServerOptions {
  const context = 'invalid MCP server options'
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidRequestError(['(root): expected an options object ({ executor, workspaceRoot?, ... })'], {
      context,
    })
  const given = options as Record<string, unknown>
  const own = Object.fromEntries(MCP_OPTION_NAMES.filter((k) => k in given).map((k) => [k, given[k]]))
  const rest = Object.fromEntries(
    Object.entries(given).filter(([k]) => k !== 'approval' && !(MCP_OPTION_NAMES as readonly string[]).includes(k)),
  )
  const issues: string[] = []
  if ('approval' in given)
    issues.push('approval: not an option here: the server asks the person itself, through MCP elicitation')
  const parsed = mcpFields().safeParse(own)
  if (!parsed.success) issues.push(...InvalidRequestError.fromZod(parsed.error).issues)
  try {
    checkBashToolOptions(rest)
  } catch (error) {
    if (!isInvalidRequestError(error)) throw error
    issues.push(...error.issues)
  }
  if (issues.length > 0) throw new InvalidRequestError(issues, { context })
}
