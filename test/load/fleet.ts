/**
 * One load subject: a fresh LocalSandbox pinned to a backend, a runtime of its own, an executor
 * in one mode and the bash tool over it. Each run is the same small command of shell builtins
 * through the chosen face: it writes a file in its TMPDIR (unconfined runs have none: their
 * workdir), prints past the output cap (so its stdout spills) and writes its marker to stderr;
 * every tenth confined run also leaves a `setsid` sleeper behind. Every process of a run carries
 * the fleet's marker in its environment (a DSH_ variable), so a survivor is found by it.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import type { SandboxBackendName } from '../../src/policy/backends.js'
import type { SandboxMode } from '../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import { ShellEnvRegistry } from '../../src/shell/env-registry.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import type { ShellRunResult } from '../../src/shell/types.js'
import { LocalSubprocessRuntime } from '../../src/subprocess/runtime.js'
import { createBashTools } from '../../src/tool/toolset.js'

/** Through what a run goes: the executor's run(), or a bash tool call. */
export type Face = 'executor' | 'tool'

/** The output cap of every run: its 300 bytes of stdout spill. */
const OUTPUT_CAP = 100
const PRINTED = 300

/** The command of run `i`; `leave`: whether it leaves a sleeper in a session of its own. */
function commandOf(i: number, leave: boolean): string {
  const lines = [`echo ${i} > "\${TMPDIR:-.}/load-$$"`, `printf '%0${PRINTED}d' 0`, 'echo "$DSH_LOAD_MARK" >&2']
  if (leave && i % 10 === 0) lines.push('setsid sleep 60 </dev/null >/dev/null 2>&1 &')
  return lines.join('\n')
}

/** What went wrong with one run's result, or undefined when it is what the command does. */
function resultProblem(r: ShellRunResult | undefined, fleet: Fleet): string | undefined {
  const { mode, backend } = fleet
  if (r === undefined) return 'no result'
  if (r.exitCode !== 0) return `exit ${r.exitCode} signal ${r.signal}: ${r.stderr.text}`
  if (r.stdout.text !== '0'.repeat(OUTPUT_CAP) || !r.stdout.truncated) return `stdout ${JSON.stringify(r.stdout)}`
  // The marker reached the command: what finds a survivor is really in its environment.
  if (r.stderr.text !== `${fleet.token}\n`) return `stderr ${JSON.stringify(r.stderr.text)}`
  // The spill holds the whole stream while the sandbox lives.
  const spill = r.stdout.spillPath
  if (spill === undefined || fs.readFileSync(spill, 'latin1') !== '0'.repeat(PRINTED)) return `spill ${spill}`
  const confined = mode !== 'danger-full-access'
  if (r.sandbox?.mode !== mode || (confined && r.sandbox.backend !== backend) || r.sandbox.denied)
    return `sandbox facts ${JSON.stringify(r.sandbox)}`
  return undefined
}

/** A sandbox, runtime, executor and tool set for one backend, mode and face. */
export class Fleet {
  /** `DSH_LOAD_MARK=<token>`: in the environment of every process of this fleet's runs. */
  readonly marker: string
  /** The spill files runs reported, for the check after close. */
  readonly spills: string[] = []

  private constructor(
    readonly backend: SandboxBackendName,
    readonly mode: SandboxMode,
    readonly face: Face,
    private readonly sandbox: LocalSandbox,
    private readonly runtime: LocalSubprocessRuntime,
    private readonly executor: LocalShellExecutor,
    /** The marker's value. */
    readonly token: string,
  ) {
    this.marker = `DSH_LOAD_MARK=${token}`
  }

  /** A fleet over a fresh sandbox pinned to `backend`, with `root` its workspace. */
  static async open(backend: SandboxBackendName, mode: SandboxMode, face: Face, root: string): Promise<Fleet> {
    const sandbox = await LocalSandbox.create({ backends: [backend] })
    const runtime = new LocalSubprocessRuntime()
    const token = randomBytes(8).toString('hex')
    const env = new ShellEnvRegistry()
    env.register({
      name: 'load-mark',
      variables: [{ key: 'DSH_LOAD_MARK', description: 'the load fleet of this run' }],
      resolve: () => ({ DSH_LOAD_MARK: token }),
    })
    const executor = new LocalShellExecutor({
      cwd: root,
      workspaceRoot: root,
      sandbox,
      subprocess: runtime,
      defaultMode: mode,
      env,
      maxOutputBytes: OUTPUT_CAP,
      graceMs: 2000,
    })
    return new Fleet(backend, mode, face, sandbox, runtime, executor, token)
  }

  /** Runs run `i` through this fleet's face; throws naming what is wrong with its result. */
  async run(i: number): Promise<void> {
    // An unconfined foreground run is not supervised: a sleeper in a session of its own outlives it by design.
    const command = commandOf(i, this.mode !== 'danger-full-access')
    let result: ShellRunResult | undefined
    if (this.face === 'executor') result = await this.executor.run(this.executor.resolve({ command }))
    else {
      const tools = this.tools ?? createBashTools({ executor: this.executor, workspaceRoot: this.executor.config.cwd })
      this.tools = tools
      const called = await tools.bash.execute({ command }, { callId: `load-${i}`, agent: 'load' })
      if (called.isError) throw new Error(`run ${i}: tool error ${called.code}: ${called.content}`)
      result = called.result
    }
    const problem = resultProblem(result, this)
    if (problem !== undefined) throw new Error(`run ${i} (${this.face}, ${this.backend}, ${this.mode}): ${problem}`)
    this.spills.push(result!.stdout.spillPath!)
  }

  private tools: ReturnType<typeof createBashTools> | undefined

  /** Starts a background job that leaves a sleeper in a session of its own and waits; stopped by the fleet's close. */
  startSleeper(): void {
    this.executor.start(this.executor.resolve({ command: 'setsid sleep 60 </dev/null >/dev/null 2>&1 & wait' }))
  }

  /** How many Landlock ruleset fds the sandbox holds now. */
  get openRulesets(): number {
    return this.sandbox.openRulesets
  }

  /** Disposes the executor, the sandbox and the runtime, in that order. */
  async close(): Promise<void> {
    await this.executor.dispose()
    await this.sandbox.dispose()
    await this.runtime.dispose()
  }
}
