/**
 * `cordon mcp`'s server (src/cli/mcp.ts loads this module at run time, never the CLI bundle): the
 * policy the flags gave, a LocalSandbox and an executor for it, cordon's tools served over
 * stdin/stdout until the client goes (stdin at EOF, stdout broken, or a signal). Then the
 * connection's jobs and calls end and the sandbox is disposed, its session dirs removed.
 */
import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { PolicyFlags } from '../cli/policy-options.js'
import { displayLine } from '../policy/display-text.js'
import { LocalSandbox } from '../sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../shell/executor.js'
import { disposeDefaultSubprocessRuntime } from '../subprocess/default-runtime.js'
import { overlaidSandbox, overlayOf } from './policy-overlay.js'
import { createMcpServer } from './server.js'

/** What `cordon mcp` hands the server: the parsed flags and the streams to speak on. */
export interface StdioServeOptions {
  flags: Pick<PolicyFlags, 'policy' | 'backends' | 'environment' | 'probeCache' | 'config'>
  stdin: Readable
  stdout: Writable
  stderr: NodeJS.WritableStream
}

/** The signals that end the server as the client's going does. */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** Serves cordon's tools over stdio until the client goes; resolves with the exit status (0) once all is disposed. */
export async function serveStdio(options: StdioServeOptions): Promise<number> {
  const { policy, backends, environment, probeCache, config } = options.flags
  const root = policy.workspaceRoot
  // danger-full-access confines nothing: no probe, and a tool that offers no escalation.
  const sandbox =
    policy.mode === 'danger-full-access'
      ? undefined
      : await LocalSandbox.create({ probeCache, ...(backends ? { backends } : {}) })
  const executor = new LocalShellExecutor({
    cwd: root,
    workspaceRoot: root,
    defaultMode: policy.mode,
    environment,
    ...(sandbox ? { sandbox: overlaidSandbox(sandbox, overlayOf(policy)) } : {}),
  })
  const mcp = createMcpServer({
    executor,
    workspaceRoot: root,
    network: policy.network,
    // The configuration (files and flags): its paths and limits join each call's policy, under the approval digest.
    config,
    dispose: async () => {
      await executor.dispose()
      await disposeDefaultSubprocessRuntime()
      await sandbox?.dispose()
    },
  })
  mcp.server.onerror = (error) => options.stderr.write(`cordon mcp: ${displayLine(error.message)}\n`)
  const end = () => void mcp.close()
  options.stdin.once('end', end)
  options.stdin.once('close', end)
  // EPIPE on stdout: the client is gone (an unhandled stream error would end the process before disposal).
  options.stdout.on('error', end)
  options.stderr.on('error', () => undefined)
  for (const signal of ENDING_SIGNALS) process.once(signal, end)
  try {
    await mcp.server.connect(new StdioServerTransport(options.stdin, options.stdout))
    await mcp.disposed
  } finally {
    options.stdin.off('end', end)
    options.stdin.off('close', end)
    for (const signal of ENDING_SIGNALS) process.off(signal, end)
  }
  return 0
}
