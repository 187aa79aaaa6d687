// Code written to any of the three seed pages compiles against the package root: every class,
// type and constant a seed names is exported under that name. Seed 004 still uses the names from
// before dsh's rename (Bash*), which are the same declarations as the Shell* ones of seed 000.
// The compile-time half of this test is `tsc --noEmit` over this file; the rest runs.
import { describe, expect, expectTypeOf, it } from 'vitest'
import * as cordon from '../../src/index.js'
import {
  BashExecutor,
  DSH_ENV_PREFIX,
  MAX_TIMER_DELAY_MS,
  parseExitStatus,
  SANDBOX_UNAVAILABLE,
  ShellExecutor,
  type BashEnvContributor,
  type BashEnvVariableInfo,
  type BashExecRequest,
  type BashExecSpec,
  type BashProcess,
  type BashRunResult,
  type CollectedOutput,
  type DshEnvironment,
  type DshEnvironmentKey,
  type ParsedExitStatus,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  type SandboxMode,
  type ShellExecRequest,
  type ShellExecSpec,
  type ShellProcess,
  type ShellProcessRead,
  type ShellProcessStatus,
  type ShellRunResult,
  type ShellSandboxInfo,
  type SubprocessCollect,
  type SubprocessCollectedOutputs,
  type SubprocessHandle,
  type SubprocessOutcome,
  type SubprocessOutputMode,
  type SubprocessOutputRead,
  type SubprocessOutputReader,
  type SubprocessSpawnSpec,
  type SubprocessStdinMode,
  type SubprocessStdio,
  type ToolExecution,
} from '../../src/index.js'

const empty: CollectedOutput = { text: '', truncated: false }

/** An executor written to seed 004's page (ctx.bash), word for word in its names. */
class EchoBashExecutor extends BashExecutor {
  get sandboxMode(): SandboxMode | undefined {
    return undefined
  }
  resolve(request: BashExecRequest): BashExecSpec {
    return {
      command: request.command,
      workdir: request.workdir ?? '/',
      timeoutMs: request.timeoutMs ?? 1000,
      stdoutMaxBytes: request.stdoutMaxBytes ?? 1000,
      sandboxPolicy: request.sandboxPolicy,
    }
  }
  async run(spec: BashExecSpec): Promise<BashRunResult> {
    return {
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
      timeoutMs: spec.timeoutMs,
      stdout: { text: spec.command, truncated: false },
      stderr: empty,
    }
  }
  start(spec: BashExecSpec): BashProcess {
    const read: ShellProcessRead = { delta: spec.command, lossy: false }
    const status: ShellProcessStatus = 'completed'
    return { status, exitCode: 0, signal: null, done: Promise.resolve(), readOutput: () => read, kill: () => false }
  }
}

describe('seed names at the package root', () => {
  it("seed 004's BashExecutor is seed 000's ShellExecutor, and code written to it runs", async () => {
    expect(BashExecutor).toBe(ShellExecutor)
    const executor: ShellExecutor = new EchoBashExecutor()
    const result = await executor.run(executor.resolve({ command: 'hi' }))
    expect(result.stdout.text).toBe('hi')
    expect(executor.start(executor.resolve({ command: 'bg' })).readOutput().delta).toBe('bg')
  })

  it('the Bash* types are the Shell* types', () => {
    expectTypeOf<BashExecRequest>().toEqualTypeOf<ShellExecRequest>()
    expectTypeOf<BashExecSpec>().toEqualTypeOf<ShellExecSpec>()
    expectTypeOf<BashRunResult>().toEqualTypeOf<ShellRunResult>()
    expectTypeOf<BashProcess>().toEqualTypeOf<ShellProcess>()
  })

  it("seed 003's managed-namespace vocabulary: DSH_ENV_PREFIX types DshEnvironmentKey", () => {
    expect(DSH_ENV_PREFIX).toBe('DSH_')
    const key: DshEnvironmentKey = `${DSH_ENV_PREFIX}WEB_URL`
    expectTypeOf<`${typeof DSH_ENV_PREFIX}${string}`>().toEqualTypeOf<DshEnvironmentKey>()
    const env: DshEnvironment = { [key]: 'http://localhost' }
    expect(env.DSH_WEB_URL).toBe('http://localhost')
    expect(MAX_TIMER_DELAY_MS).toBe(2_147_483_647)
  })

  it("seed 000's ParsedExitStatus is what parseExitStatus returns", () => {
    const parsed: ParsedExitStatus = parseExitStatus('out\n[exit code: 3]')
    expect(parsed).toEqual({ body: 'out', exitCode: 3, signal: null })
    expect(SANDBOX_UNAVAILABLE).toBe('SANDBOX_UNAVAILABLE')
  })

  it('the env registry vocabulary of seed 000 is exported', () => {
    const contributor: BashEnvContributor = {
      name: 'web',
      variables: [{ key: 'DSH_WEB_URL', description: 'the web app' }],
      resolve: (execution: ToolExecution) => ({ DSH_WEB_URL: execution.sessionId ?? '' }),
    }
    const registry = new cordon.ShellEnvRegistry()
    registry.register(contributor)
    const listed: BashEnvVariableInfo[] = registry.list()
    expect(listed).toEqual([{ key: 'DSH_WEB_URL', description: 'the web app', contributor: 'web' }])
  })

  it('every value the seeds name is exported', () => {
    for (const name of [
      'ShellExecutor',
      'BashExecutor',
      'ShellEnvRegistry',
      'SubprocessRuntime',
      'LocalSubprocessRuntime',
      'scrubbedParentEnv',
      'parseExitStatus',
      'renderResult',
      'DSH_ENV_PREFIX',
      'MAX_TIMER_DELAY_MS',
      'SANDBOX_UNAVAILABLE',
      'SandboxUnavailableError',
    ]) {
      expect(cordon, name).toHaveProperty(name)
    }
  })

  it('every type the seeds name is exported (checked by tsc)', () => {
    // Each line fails to compile when its name is missing from the package root.
    expectTypeOf<ShellSandboxInfo['mode']>().toEqualTypeOf<SandboxMode>()
    expectTypeOf<ShellSandboxInfo['enforcement']>().toEqualTypeOf<SandboxEnforcement | undefined>()
    expectTypeOf<SandboxExecutionPolicy['mode']>().toEqualTypeOf<SandboxMode>()
    expectTypeOf<SubprocessStdio['stdin']>().toEqualTypeOf<SubprocessStdinMode>()
    expectTypeOf<SubprocessStdio['stdout']>().toEqualTypeOf<SubprocessOutputMode>()
    expectTypeOf<SubprocessCollect['maxBytes']>().toBeNumber()
    expectTypeOf<SubprocessSpawnSpec['stdio']>().toEqualTypeOf<SubprocessStdio>()
    expectTypeOf<SubprocessHandle['collected']>().toEqualTypeOf<SubprocessCollectedOutputs>()
    expectTypeOf<SubprocessHandle['done']>().toEqualTypeOf<Promise<SubprocessOutcome>>()
    expectTypeOf<SubprocessOutputReader['readFrom']>().returns.toEqualTypeOf<SubprocessOutputRead>()
  })
})
