/**
 * `cordon/mcp`: cordon's tools as an MCP server, on the optional peer dependency
 * @modelcontextprotocol/sdk. A subpath of its own, so the main entry (src/index.ts) and the CLI
 * never load the SDK. Re-exports only.
 */
export { createMcpServer, type CordonMcpServer, type McpServerOptions } from './server.js'
export {
  checkMcpServerOptions,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  MCP_OPTION_NAMES,
  type McpDisposable,
} from './options.js'
export {
  outputSchemaOf,
  outputSchemas,
  type BashStructured,
  type JobStructured,
  type JobToolStructured,
  type RunStructured,
  type SandboxStructured,
  type ToolOutputSchema,
} from './output-schema.js'
export { callToolResult, structuredContentOf } from './output-facts.js'
export { MAX_PROGRESS_MESSAGE, PROGRESS_INTERVAL_MS, progressMessage } from './progress.js'
export { ALLOW_ONCE, APPROVAL_FIELD, APPROVAL_FORM, REFUSAL_REASONS, REJECT } from './elicitation.js'
