// Hosts for the attacks of test/escape/hidden/permissions-and-ttys.test.ts, run as root or as uid
// 65534 through run-as.ts. argv: <scenario> <json args>; prints a JSON result on stderr's last
// line when stdout is under attack (tty), on stdout otherwise.
//
// - inherit-stdout: runs args.script (Python) with the host's stdout inherited, confined by
//   args.backend (or unconfined: 'none'), and prints { exitCode, stderr }.
// - plans: one long-lived LocalSandbox runs `cat args.file` (hidden) twice, runs args.between
//   (a shell command of the host's) and runs it a third time; prints the three outputs.
import { execFileSync } from 'node:child_process'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'

interface Args {
  backend: SandboxBackendName | 'none'
  mode: 'read-only' | 'workspace-write'
  root: string
  script?: string
  file?: string
  between?: string
}

const [scenario, raw] = process.argv.slice(2)
const args = JSON.parse(raw ?? '{}') as Args
const rt = new LocalSubprocessRuntime()

async function run(sandbox: LocalSandbox | undefined, spec: SubprocessSpawnSpec) {
  const policy = { mode: args.mode, workspaceRoot: args.root, hiddenPaths: args.file ? [args.file] : [] }
  const s = sandbox ? sandbox.confine(spec, policy).spec : spec
  const h = rt.spawn(s)
  const exit = await h.done
  await h.waitForExit()
  return {
    exitCode: exit.exitCode,
    stdout: h.collected.stdout?.readFrom(0).text ?? '',
    stderr: h.collected.stderr?.readFrom(0).text ?? '',
  }
}

const sandbox = args.backend === 'none' ? undefined : await LocalSandbox.create({ backends: [args.backend] })
let result: unknown
if (scenario === 'inherit-stdout') {
  result = await run(sandbox, {
    argv: ['python3', '-c', args.script ?? ''],
    cwd: args.root,
    graceMs: 500,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: { stdin: 'ignore', stdout: 'inherit', stderr: { maxBytes: 65536 } },
  })
} else if (scenario === 'plans') {
  const spec: SubprocessSpawnSpec = {
    argv: ['/bin/cat', args.file ?? '/nonexistent'],
    cwd: args.root,
    graceMs: 500,
    stdio: { stdin: 'ignore', stdout: { maxBytes: 65536 }, stderr: { maxBytes: 65536 } },
  }
  // Two runs before the change: the second plan is the one whose view is watched (and cached).
  const first = await run(sandbox, spec)
  const second = await run(sandbox, spec)
  execFileSync('/bin/sh', ['-c', args.between ?? 'true'])
  const third = await run(sandbox, spec)
  result = { first, second, third }
} else throw new Error(`unknown scenario ${scenario}`)
await rt.dispose()
await sandbox?.dispose()
process.stderr.write(`\n${JSON.stringify(result)}\n`, () => process.exit(0))
