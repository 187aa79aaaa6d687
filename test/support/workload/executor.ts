/**
 * A workload through the executor in this process, for commands the CLI would nest (`cordon run
 * -- bash -c SCRIPT` runs SCRIPT in a second shell inside the executor's): the policy built from
 * the same flags `cordon run` takes, a sandbox of its own (its private dir given), and the
 * denial line the CLI would print for the result.
 */
import { parseWith, policyFrom } from '../../../src/cli/policy-options.js'
import { denialLine } from '../../../src/cli/run.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import type { ShellRunResult } from '../../../src/shell/types.js'

/** The result of one executor run and the line `cordon run` would print for it. */
export interface ExecutorRun {
  result: ShellRunResult
  denial: string | undefined
}

/** Runs `command` in `cwd` under the policy `flags` describe; `env`: the command's entries and the sandbox's environment; `stdin`: its input. */
export async function runThroughExecutor(
  flags: readonly string[],
  command: string,
  cwd: string,
  env: Record<string, string>,
  stdin?: string,
): Promise<ExecutorRun> {
  const { values } = parseWith([...flags], { timeout: { type: 'string' } })
  const parsed = policyFrom(values, cwd)
  const sandbox = await LocalSandbox.create({ ...(parsed.backends ? { backends: parsed.backends } : {}), env })
  const executor = new LocalShellExecutor({
    cwd,
    workspaceRoot: parsed.policy.workspaceRoot,
    environment: parsed.environment,
    sandbox,
  })
  try {
    const spec = executor.resolve({ command, sandboxPolicy: parsed.policy, env, timeoutMs: 90_000, stdin })
    const result = await executor.run(spec)
    return { result, denial: denialLine(result, parsed.policy, { command, cwd }) }
  } finally {
    await executor.dispose()
    await sandbox.dispose()
  }
}
