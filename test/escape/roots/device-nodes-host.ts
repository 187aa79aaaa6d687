// The host of test/escape/roots/device-nodes.test.ts, run as root or as uid 65534 through
// run-as.ts, with its stdout on the host's /dev/null (so a command whose stdout is inherited holds
// the host's node itself). It runs the metadata attack on the device nodes (chmod, utime and a
// POSIX ACL through setxattr on each path given) one way:
// - `none`: unconfined, on the paths as given (the control: copies the test made and chowned);
// - `resident` / `per-run`: under bubblewrap, through a resident instance or a bwrap of its own;
// - `terminal`: under bubblewrap, as a confined terminal (node-pty → bwrap → cordon-exec init).
// It writes a JSON result to the given file, one per case: the attack's lines, the sandbox's pid 1,
// and the account's metadata verdict. argv: <json { cases: [{ how, mode }], root, targets,
// terminalTargets, resultFile }> (one process for every case: the probe runs once per sandbox).
import fs from 'node:fs'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxPolicy } from '../../../src/policy/vocabulary.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { PYTHON } from '../host/host-objects.js'

/** One way the attack runs. */
export type AttackPath = 'none' | 'resident' | 'per-run' | 'terminal'

/** What the host reports. */
export interface DeviceAttackResult {
  /** "PATH OP ERRNO" lines (0: the call succeeded), and "works WHAT ERRNO" lines. */
  lines: string[]
  /** The sandbox's pid 1 command line (NULs as spaces): tells the resident launcher from an init. */
  init: string
  metadata?: { governed: boolean; how: string } | undefined
  output: string
}

// Each call on each path; a call that succeeds is undone at once (the mode, the times, the ACL),
// so a break costs the host nothing. Then the nodes must still work.
const ATTACK = `
import os, struct, sys
ENTRIES = [(1, 6, 0xffffffff), (2, 4, 65533), (4, 6, 0xffffffff), (0x10, 6, 0xffffffff), (0x20, 6, 0xffffffff)]
ACL = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *e) for e in ENTRIES)
out = []
def attempt(target, op, call, undo):
    try:
        call()
    except OSError as e:
        out.append(f'{target} {op} {e.errno}')
        return
    out.append(f'{target} {op} 0')
    try:
        undo()
    except OSError:
        pass
for t in sys.argv[1:]:
    if not os.path.exists(t):
        out.append(f'{t} absent 2')
        continue
    st = os.stat(t)
    attempt(t, 'chmod', lambda: os.chmod(t, (st.st_mode & 0o7777) ^ 0o004), lambda: os.chmod(t, st.st_mode & 0o7777))
    attempt(t, 'utime', lambda: os.utime(t, (1e9, 1e9)), lambda: os.utime(t, ns=(st.st_atime_ns, st.st_mtime_ns)))
    attempt(t, 'acl', lambda: os.setxattr(t, 'system.posix_acl_access', ACL), lambda: os.removexattr(t, 'system.posix_acl_access'))
with open('/dev/null', 'w') as f:
    out.append(f'works null-write {0 if f.write("x") == 1 else 5}')
with open('/dev/urandom', 'rb') as f:
    out.append(f'works urandom-read {0 if len(f.read(16)) == 16 else 5}')
out.append('init ' + open('/proc/1/cmdline', 'rb').read().replace(b'\\0', b' ').decode())
sys.stderr.write('\\n'.join(out) + '\\nDONE\\n')
sys.stderr.flush()
`

/** One case: a path and a mode. */
export interface DeviceAttackCase {
  how: AttackPath
  mode: 'read-only' | 'workspace-write'
}

interface Args {
  cases: DeviceAttackCase[]
  root: string
  /** The paths attacked through a pipe (a terminal attacks `terminalTargets`). */
  targets: string[]
  terminalTargets?: string[]
  resultFile: string
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args
const argvFor = (targets: readonly string[]) => [PYTHON, '-c', ATTACK, ...targets]
const policyFor = (c: DeviceAttackCase): SandboxPolicy => ({ mode: c.mode, workspaceRoot: args.root })
type Got = Omit<DeviceAttackResult, 'lines' | 'init'>

/** The attack through the piped runtime: stdin ignored, stdout inherited (the host's /dev/null), stderr collected. */
async function piped(sandbox: LocalSandbox | undefined, c: DeviceAttackCase): Promise<Got> {
  const spec: SubprocessSpawnSpec = {
    argv: argvFor(args.targets),
    cwd: args.root,
    graceMs: 500,
    env: { PATH: '/usr/bin:/bin' },
    stdio: { stdin: 'ignore', stdout: 'inherit', stderr: { maxBytes: 1 << 20 } },
  }
  const confined = sandbox?.confine(spec, policyFor(c))
  const rt = new LocalSubprocessRuntime()
  try {
    const h = rt.spawn(confined?.spec ?? spec)
    await h.done
    await h.waitForExit()
    return { output: h.collected.stderr?.readFrom(0).text ?? '', metadata: confined?.plan?.account.classes.metadata }
  } finally {
    await rt.dispose()
  }
}

/** The attack in a confined terminal: its lines come back on the pty. */
async function terminal(sandbox: LocalSandbox, c: DeviceAttackCase): Promise<Got> {
  const spec = {
    argv: argvFor(args.terminalTargets ?? args.targets),
    cwd: args.root,
    cols: 200,
    rows: 50,
    graceMs: 500,
  }
  const confined = sandbox.confineTerminal(spec, policyFor(c))
  const rt = new LocalSubprocessRuntime()
  try {
    const t = await rt.spawnTerminal(confined.spec)
    let output = ''
    t.onData((chunk) => {
      output += chunk
    })
    await t.done
    return { output: output.replace(/\r/g, ''), metadata: confined.plan?.account.classes.metadata }
  } finally {
    await rt.dispose()
  }
}

async function run(): Promise<DeviceAttackResult[]> {
  const sandboxes = new Map<boolean, LocalSandbox>()
  const sandboxFor = async (resident: boolean) => {
    let s = sandboxes.get(resident)
    if (s === undefined) {
      s = await LocalSandbox.create({ backends: ['bubblewrap'], residentInstances: resident })
      sandboxes.set(resident, s)
    }
    return s
  }
  try {
    const results: DeviceAttackResult[] = []
    for (const c of args.cases) {
      const sandbox = c.how === 'none' ? undefined : await sandboxFor(c.how === 'resident')
      const got = c.how === 'terminal' ? await terminal(sandbox as LocalSandbox, c) : await piped(sandbox, c)
      const lines = got.output.split('\n').filter((l) => /^\S+ \S+ \d+$/.test(l))
      const init = /^init (.*)$/m.exec(got.output)?.[1] ?? ''
      results.push({ ...got, lines, init })
    }
    return results
  } finally {
    for (const s of sandboxes.values()) await s.dispose()
  }
}

try {
  fs.writeFileSync(args.resultFile, JSON.stringify({ uid: process.getuid?.(), result: await run() }))
} catch (e) {
  fs.writeFileSync(args.resultFile, JSON.stringify({ error: e instanceof Error ? e.stack : String(e) }))
}
process.exit(0)
