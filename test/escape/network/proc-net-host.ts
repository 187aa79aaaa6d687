// The host of test/escape/network/proc-net.test.ts, run as root or as uid 65534 through run-as.ts:
// runs `cat /proc/PID/net/unix` (PID: a host process) under `network: deny`, confined by the backend
// or unconfined ('none', the control), and prints what it read with the account's network verdict.
// argv: <json { backend, pid, root }>.
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'

const args = JSON.parse(process.argv[2] ?? '{}') as { backend: SandboxBackendName | 'none'; pid: number; root: string }
const spec: SubprocessSpawnSpec = {
  // Both the host process's table and the command's own (the same one without a network namespace).
  argv: ['/bin/sh', '-c', `cat /proc/${args.pid}/net/unix /proc/self/net/unix 2>&1; true`],
  cwd: args.root,
  graceMs: 500,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stdio: { stdin: 'ignore', stdout: { maxBytes: 1 << 20 }, stderr: { maxBytes: 65536 } },
}
const sandbox = args.backend === 'none' ? undefined : await LocalSandbox.create({ backends: [args.backend] })
const confined = sandbox?.confine(spec, { mode: 'read-only', workspaceRoot: args.root, network: 'deny' })
const rt = new LocalSubprocessRuntime()
const h = rt.spawn(confined?.spec ?? spec)
await h.done
await h.waitForExit()
const out = {
  stdout: h.collected.stdout?.readFrom(0).text ?? '',
  enforcement: confined?.enforcement,
  network: confined?.plan?.account.classes.network,
}
await rt.dispose()
await sandbox?.dispose()
process.stdout.write(JSON.stringify(out), () => process.exit(0))
