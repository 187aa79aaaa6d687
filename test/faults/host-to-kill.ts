// The host of test/faults/host-killed.test.ts, a plain Node process with cordon's private parent
// in $CORDON_PRIVATE_DIR. argv: <phase> <JSON arguments>.
//   kill: on each backend, starts confined trees that each leave a `setsid` daemon (a bash tool
//     run, a bash tool background job, a job whose TMPDIR is a tmpfs, a terminal), plus an
//     unconfined run that spills; prints `{ "labels": { label: [pid…] } }` once every daemon runs,
//     then waits to be SIGKILLed.
//   next: starts as a host does (a sandbox, a runtime), which sweeps what dead hosts left; exits.
// Every process of a tree carries CORDON_FAULT=<mark>:<backend>:<what> in its environment.
import { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../src/shell/executor.js'
import { createBashTools } from '../../src/tool/toolset.js'
import { LocalSubprocessRuntime } from '../../src/subprocess/runtime.js'
import { eventually, processesMarked } from '../support/subprocess/processes.js'

interface Args {
  root: string
  backends: SandboxBackendName[]
  mark: string
}

const [phase, json] = process.argv.slice(2)
if (!phase || !json) throw new Error('usage: host-to-kill <kill|next> <json>')
const args = JSON.parse(json) as Args

/** The env entry of one tree. */
function labelOf(mark: string, backend: string, what: string): string {
  return `CORDON_FAULT=${mark}:${backend}:${what}`
}

/** bash: marks itself, leaves a setsid daemon, then waits. */
function leaving(label: string): string {
  return `export ${label}; setsid sh -c 'sleep 300; :' & sleep 300`
}

/** Starts every tree of `backend`; their labels. */
async function startTrees(backend: SandboxBackendName, runtime: LocalSubprocessRuntime): Promise<string[]> {
  const { root, mark } = args
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  const executor = new LocalShellExecutor({ sandbox, cwd: root, workspaceRoot: root, graceMs: 500 })
  const tools = createBashTools({ executor, workspaceRoot: root })
  const call = { callId: 'c', agent: 'a', sessionId: 'killed' }
  const label = (what: string) => labelOf(mark, backend, what)
  void tools.bash.execute({ command: leaving(label('run')) }, call)
  const job = await tools.bash.execute({ command: leaving(label('job')), run_in_background: true }, call)
  if (job.isError) throw new Error(`job: ${job.content}`)
  const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
  const bounded = { ...policy, sessionId: 'bounded', limits: { tempBytes: 1024 * 1024 } }
  executor.start(executor.resolve({ command: leaving(label('tmpfs')), sandboxPolicy: bounded }))
  const terminal = { argv: ['bash', '-c', leaving(label('terminal'))], cwd: root, cols: 80, rows: 24, graceMs: 500 }
  await runtime.spawnTerminal(sandbox.confineTerminal(terminal, { ...policy, mode: 'read-only' }).spec)
  return ['run', 'job', 'tmpfs', 'terminal'].map(label)
}

async function kill(): Promise<void> {
  const runtime = new LocalSubprocessRuntime()
  // An unconfined run whose output spills into the runtime's own spill dir.
  await runtime.spawn({
    argv: ['seq', '1', '100000'],
    cwd: args.root,
    graceMs: 500,
    stdio: { stdin: 'ignore', stdout: { maxBytes: 100, spill: { maxBytes: 10_000_000 } }, stderr: { maxBytes: 100 } },
  }).done
  const labels = (await Promise.all(args.backends.map((b) => startTrees(b, runtime)))).flat()
  // The daemon, its sleep and the tree's own sleep.
  const running = () => labels.every((l) => processesMarked(l).length >= 3)
  if (!(await eventually(running, 60_000))) throw new Error('the trees never all ran')
  console.log(JSON.stringify({ labels: Object.fromEntries(labels.map((l) => [l, processesMarked(l)])) }))
  await new Promise(() => undefined) // until SIGKILL
}

async function next(): Promise<void> {
  const sandbox = await LocalSandbox.create({ backends: args.backends })
  const runtime = new LocalSubprocessRuntime()
  await runtime.dispose()
  await sandbox.dispose()
}

await (phase === 'kill' ? kill() : next())
