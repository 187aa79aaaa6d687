/**
 * `cordon mcp`: cordon's tools (bash, job_output, job_kill) served over MCP on stdin/stdout, each
 * command confined to the policy the flags give. The server lives in dist/mcp/ and needs the
 * optional peer dependency @modelcontextprotocol/sdk: both are loaded here, at run time, through
 * `require`, so the CLI bundle holds neither and `cordon run` never loads them. Without the SDK
 * the verb says what to install, in one line, and exits 125.
 */
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { type PolicyFlags, POLICY_HELP, parseWith, policyFrom } from './policy-options.js'
import { displayLine } from '../policy/display-text.js'
import { PACKAGE_ROOT } from '../policy/package-root.js'
import { UsageError } from './usage-error.js'

/** The package `cordon mcp` needs, as a person installs it. */
export const MCP_SDK_PACKAGE = '@modelcontextprotocol/sdk'

/** The one line `cordon mcp` prints when the SDK is not installed (after `cordon: `). */
export const MCP_SDK_MISSING = `mcp needs the optional peer dependency ${MCP_SDK_PACKAGE}, which is not installed here; install it beside cordon: npm install ${MCP_SDK_PACKAGE}`

/** The policy flags that do not apply to a server (it speaks MCP on stdout; the tool sets each command's environment). */
const NOT_FOR_MCP = ['--json', '--keep-env']

/** `cordon mcp --help`. */
export const MCP_HELP = `Usage: cordon mcp [options]

Serves cordon's tools (bash, job_output, job_kill, sandbox_refusals) to an MCP client over stdin
and stdout. The client starts it, e.g.
  { "command": "npx", "args": ["cordon", "mcp", "--mode", "workspace-write"] }
Every command runs confined to the policy below, its workspace root the current directory (or
--root). A strictly-wider retry is asked of the person through the client (MCP elicitation).
Exit status: 0 once the client closes; 125 when cordon cannot serve (bad usage, or the optional
package ${MCP_SDK_PACKAGE} is not installed).

Options:
${POLICY_HELP.split('\n')
  .filter((line) => !NOT_FOR_MCP.some((flag) => line.includes(flag)))
  .join('\n')}
  -h, --help             this help
`

/** Thrown when the SDK cannot be resolved or loaded: main prints its one line and exits 125. */
export class McpSdkMissingError extends Error {
  override readonly name = 'McpSdkMissingError'
  readonly code = 'MCP_SDK_MISSING'
}

/** What the verb uses of dist/mcp/stdio.js (src/mcp/stdio.ts), typed here: the CLI never imports src/mcp. */
interface StdioModule {
  serveStdio(options: {
    flags: Pick<PolicyFlags, 'policy' | 'backends' | 'environment' | 'probeCache' | 'config'>
    stdin: Readable
    stdout: Writable
    stderr: NodeJS.WritableStream
  }): Promise<number>
}

/** Whether `error` says the SDK (not some other module) could not be found. */
function isSdkMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : ''
  return (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && message.includes(MCP_SDK_PACKAGE)
}

/**
 * `root`/dist/mcp/stdio.js, loaded by `require` (the bundle has no import()), the SDK resolved from
 * there as that module will; McpSdkMissingError when it cannot be.
 */
export function loadStdioServer(root: string = PACKAGE_ROOT): StdioModule {
  const require = createRequire(join(root, 'dist', 'mcp', 'stdio.js'))
  try {
    require.resolve(`${MCP_SDK_PACKAGE}/server/index.js`)
    return require('./stdio.js') as StdioModule
  } catch (error) {
    if (isSdkMissing(error)) throw new McpSdkMissingError(MCP_SDK_MISSING, { cause: error })
    throw error
  }
}

/** The streams the verb speaks MCP on (stdin and stdout) and reports on (stderr). */
export interface McpIo {
  stdin: NodeJS.ReadableStream
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/** Runs the `mcp` verb: serves until the client closes; returns the exit status. */
export async function mcpVerb(args: string[], io: McpIo): Promise<number> {
  const { values, positionals } = parseWith(args, {})
  if (values.help) {
    io.stdout.write(MCP_HELP)
    return 0
  }
  if (positionals.length > 0)
    throw new UsageError(
      `mcp: takes no command (the client sends them), got "${displayLine(positionals[0] as string)}"`,
    )
  if (values.json) throw new UsageError('--json: cordon mcp speaks MCP on stdout')
  if (values['keep-env']) throw new UsageError('--keep-env: not available for mcp (the tool sets each environment)')
  const flags = policyFrom(values)
  const server = loadStdioServer()
  return server.serveStdio({
    flags,
    stdin: io.stdin as Readable,
    stdout: io.stdout as Writable,
    stderr: io.stderr,
  })
}
