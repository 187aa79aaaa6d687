/**
 * What `cordon run --json` prints, as a zod schema: one line, either the run's ShellRunResult
 * (src/shell/types.ts) or `{"error": {name, code, message}}` when cordon could not run it (exit
 * 125). Every object is closed: a renamed, missing or extra field fails. `cordon schema run`
 * publishes it as JSON Schema; test/e2e/cli/output/json-schema.test.ts holds it to real runs.
 * Built on first use: only `cordon schema` and tests load it (zod is a third of a run's start).
 */
import type { z } from 'zod'
import { ALL_SANDBOX_BACKENDS } from '../../policy/backends.js'
import { SANDBOX_ENFORCEMENTS, SANDBOX_MODES } from '../../policy/vocabulary.js'
import { onDemand, zod } from '../../policy/schema/zod-on-demand.js'
import { MAX_TIMER_DELAY_MS } from '../../subprocess/spec/limits.js'

/** The schemas of the sandbox facts and their parts. */
function sandboxSchemas(Z: typeof z) {
  const count = Z.number().int().min(0)
  const port = Z.number().int().min(1).max(65_535)
  const refused = Z.strictObject({
    host: Z.string(),
    port,
    count: count.describe('how many times it was refused'),
    reason: Z.enum(['denied', 'not-allowed', 'address', 'server-name']),
  })
  const allowed = Z.strictObject({
    host: Z.string(),
    port,
    connections: count,
    bytesSent: count,
    bytesReceived: count,
  })
  const network = Z.strictObject({
    refused: Z.array(refused).describe('each host:port the allow-list refused (at most 32)'),
    refusedOmitted: count.optional().describe('refusals past the 32 itemized'),
    allowed: Z.array(allowed).describe('each allowed host:port reached, with its traffic (at most 32)'),
    allowedOmitted: count.optional().describe('connections past the 32 itemized'),
  })
  const closedClass = Z.strictObject({
    class: Z.string().describe('the class closed whole: shared-memory, terminals, unix-sockets, ...'),
    evidence: Z.string().describe('what the run met, in words'),
    remedy: Z.string().describe('the cordon run flags that open it'),
  })
  return Z.strictObject({
    mode: Z.enum(SANDBOX_MODES).describe('the mode the command ran under'),
    denied: Z.boolean().describe('whether the sandbox denied what the failed run needed'),
    enforcement: Z.enum(SANDBOX_ENFORCEMENTS).optional(),
    runnerFailed: Z.boolean().optional().describe('the sandbox runner failed before the command ran'),
    backend: Z.enum(ALL_SANDBOX_BACKENDS).optional().describe('the backend that confined the run'),
    deniedPaths: Z.array(Z.string()).optional(),
    network: network.optional().describe("under a network allow-list: what cordon's proxy saw"),
    deniedFor: Z.array(Z.enum(['files', 'network'])).optional(),
    refusedPaths: Z.array(Z.string()).optional().describe('every write refused, whatever the exit'),
    refusalSource: Z.enum(['messages', 'audit']).optional(),
    closedClasses: Z.array(closedClass).optional(),
    removedEnv: Z.array(Z.string()).optional().describe('variables the scrub removed (names only), on a failed run'),
  })
}

/** The schemas of `cordon run --json`'s output: a result, an error, and either (the output). */
function build() {
  const { z: Z } = zod()
  const collected = Z.strictObject({
    text: Z.string().describe('the collected text: the tail of the stream when truncated'),
    truncated: Z.boolean(),
    spillPath: Z.string().optional().describe('a file holding the whole stream, when truncated and kept'),
  })
  const result = Z.strictObject({
    exitCode: Z.number().int().min(0).max(255).nullable().describe("the command's exit code; null after a signal"),
    signal: Z.string()
      .regex(/^SIG[A-Z0-9]+$/)
      .nullable()
      .describe('the signal that ended it, e.g. SIGKILL; null on a normal exit'),
    timedOut: Z.boolean().describe("cordon's timeout ended the command (exit 124)"),
    aborted: Z.boolean().describe('cordon was interrupted (Ctrl-C, TERM) and ended the command'),
    timeoutMs: Z.number().int().min(1).max(MAX_TIMER_DELAY_MS).describe('the timeout the run had'),
    stdout: collected,
    stderr: collected,
    sandbox: sandboxSchemas(Z).optional().describe('the sandbox facts; absent for --mode danger-full-access'),
  }).describe('the run: cordon ran the command (exit: its status, 124 on timeout, 128+N on signal N)')
  const error = Z.strictObject({
    error: Z.strictObject({
      name: Z.string().describe('e.g. UsageError, SandboxUnavailableError'),
      code: Z.string()
        .regex(/^[A-Z][A-Z0-9_]*$/)
        .describe('e.g. CORDON_USAGE, SANDBOX_UNAVAILABLE'),
      message: Z.string(),
    }),
  }).describe('cordon could not run the command (exit 125)')
  const output = Z.union([result, error]).meta({
    title: 'cordon run --json',
    description: "One line on stdout: the run's result, or why cordon could not run it.",
  })
  return { result, error, output }
}

/** The schemas of `cordon run --json`'s output, built (and zod loaded) on the first call. */
export const runOutputSchemas = onDemand(build)

/** A run's result as `cordon run --json` prints it. */
export type RunOutputResult = z.output<ReturnType<typeof build>['result']>

/** The JSON Schema (draft 2020-12) of `cordon run --json`'s output. */
export function runOutputJsonSchema(): Record<string, unknown> {
  return zod().z.toJSONSchema(runOutputSchemas().output, { target: 'draft-2020-12' }) as Record<string, unknown>
}
