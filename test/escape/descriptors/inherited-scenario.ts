/**
 * Descriptors a command inherits from its host (issue 10, classes 4 and 10), run inside a
 * scenario host whose own stdout the test chose: a regular file opened before any sandbox (the
 * command must get a relay pipe, or the run must say `partial`), or a session-less pty (TIOCSTI,
 * TIOCSCTTY and TIOCLINUX through it must be refused). The command's stdout is `inherit`; it
 * reports on stderr. Each case runs in turn (the controls last, through Node's own spawn with
 * the same stdout), so the host can tell what each one did.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { AttackMode } from '../attacks/attack.js'
import { PYTHON } from '../host/host-objects.js'

/** One backend and mode (`control`: unconfined). */
export interface InheritedCase {
  backend: SandboxBackendName | 'control'
  mode: AttackMode
  root: string
}

/** What one attack through the inherited stdout did. */
export interface InheritedOutcome {
  /** The attack's own report (its stderr). */
  report: string
  exitCode: number | null
  /** The run's enforcement (confined cases). */
  enforcement?: string
  /** Why not full, where the account says (classes not governed). */
  ungoverned?: string[]
  /** The inherited file before and after (descriptor attacks). */
  file?: { before: FileState; after: FileState }
  error?: string
}

interface FileState {
  mode: number
  size: number
  content: string
}

/** Through an inherited regular file: fchmod, ftruncate, futimens and a reopen for writing. */
export const FILE_ATTACK = `
import os, stat, sys
def say(*a): print(*a, file=sys.stderr)
st = os.fstat(1)
if not stat.S_ISREG(st.st_mode):
    say("stdout is not the file (mode %o): relayed" % st.st_mode); sys.exit(0)
for name, call in (
    ("fchmod", lambda: os.fchmod(1, 0o777)),
    ("ftruncate", lambda: os.ftruncate(1, 0)),
    ("futimens", lambda: os.utime(1, (0, 0))),
    ("reopen", lambda: os.write(os.open("/proc/self/fd/1", os.O_RDWR), b"pwned")),
):
    try:
        call(); say("BREACH", name)
    except OSError as e:
        say("refused", name, e.errno)
`

/** Through an inherited session-less terminal; argv[1] is the case's token (what an injection would type). */
export const TERMINAL_ATTACKS: Readonly<Record<string, string>> = {
  'TIOCSTI into the inherited terminal': `
import fcntl, sys, termios
try:
    for c in ("d" + sys.argv[1]).encode(): fcntl.ioctl(1, termios.TIOCSTI, bytes([c]))
    print("BREACH", file=sys.stderr)
except OSError as e:
    print("refused", e.errno, file=sys.stderr)
`,
  'TIOCSCTTY on the inherited terminal, then TIOCSTI': `
import fcntl, os, sys, termios
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)
        for c in ("s" + sys.argv[1]).encode(): fcntl.ioctl(1, termios.TIOCSTI, bytes([c]))
        print("BREACH", file=sys.stderr)
    except OSError as e:
        print("refused", e.errno, file=sys.stderr)
    sys.stderr.flush(); os._exit(0)
os.waitpid(pid, 0)
`,
  // subcode 6 only reads; on a pty the driver answers EINVAL: anything but the filter's EPERM got through
  'TIOCLINUX on the inherited terminal reaches the driver': `
import errno, fcntl, sys
try:
    fcntl.ioctl(1, 0x541C, bytearray([6, 0])); print("BREACH", file=sys.stderr)
except OSError as e:
    print(("refused" if e.errno == errno.EPERM else "BREACH reached the driver"), e.errno, file=sys.stderr)
`,
}

function fileState(path: string): FileState {
  const st = fs.statSync(path)
  return { mode: st.mode & 0o7777, size: st.size, content: fs.readFileSync(path, 'utf8') }
}

/** Runs `argv` with the host's stdout inherited: confined through the case's backend, or unconfined. */
async function runInheriting(
  c: InheritedCase,
  argv: string[],
  sandboxes: Map<string, LocalSandbox>,
  rt: LocalSubprocessRuntime,
): Promise<InheritedOutcome> {
  if (c.backend === 'control') {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: c.root, stdio: ['ignore', 'inherit', 'pipe'] })
    let report = ''
    child.stderr.setEncoding('utf8').on('data', (t: string) => {
      report += t
    })
    const exitCode = await new Promise<number | null>((r) => child.on('close', (code) => r(code)))
    return { report, exitCode }
  }
  let sandbox = sandboxes.get(c.backend)
  if (!sandbox) {
    sandbox = await LocalSandbox.create({ backends: [c.backend] })
    sandboxes.set(c.backend, sandbox)
  }
  const confined = sandbox.confine(
    { argv, cwd: c.root, graceMs: 500, stdio: { stdin: 'ignore', stdout: 'inherit', stderr: { maxBytes: 65536 } } },
    { mode: c.mode, workspaceRoot: c.root, sessionId: 'inherited' },
  )
  const handle = rt.spawn(confined.spec)
  const exit = await handle.done
  await handle.waitForExit()
  const account = confined.plan?.account
  return {
    report: handle.collected.stderr?.readFrom(0).text ?? '',
    exitCode: exit.exitCode,
    ...(confined.enforcement ? { enforcement: confined.enforcement } : {}),
    ...(account ? { ungoverned: account.ungoverned.map((k) => `${k}: ${account.classes[k]?.how ?? ''}`) } : {}),
  }
}

/** Every case in turn against the host's stdout, `file` (a regular file): its state before and after each, restored between. */
export async function inheritedFile(cases: readonly InheritedCase[], file: string): Promise<InheritedOutcome[]> {
  const sandboxes = new Map<string, LocalSandbox>()
  const rt = new LocalSubprocessRuntime()
  const original = fileState(file)
  const out: InheritedOutcome[] = []
  for (const c of cases) {
    const before = fileState(file)
    let outcome: InheritedOutcome
    try {
      outcome = await runInheriting(c, [PYTHON, '-c', FILE_ATTACK], sandboxes, rt)
    } catch (e) {
      outcome = { report: '', exitCode: null, error: String(e) }
    }
    out.push({ ...outcome, file: { before, after: fileState(file) } })
    fs.chmodSync(file, original.mode)
    fs.writeFileSync(file, original.content)
  }
  await rt.dispose()
  for (const s of sandboxes.values()) await s.dispose()
  return out
}

/** Every case and terminal attack in turn against the host's stdout (a pty); the token of each is `<case index.attack index>` */
export async function inheritedTerminal(cases: readonly InheritedCase[]): Promise<Record<string, InheritedOutcome>[]> {
  const sandboxes = new Map<string, LocalSandbox>()
  const rt = new LocalSubprocessRuntime()
  const out: Record<string, InheritedOutcome>[] = []
  for (const [i, c] of cases.entries()) {
    const results: Record<string, InheritedOutcome> = {}
    for (const [j, [name, code]] of Object.entries(TERMINAL_ATTACKS).entries()) {
      try {
        results[name] = await runInheriting(c, [PYTHON, '-c', code, `<${i}.${j}>`], sandboxes, rt)
      } catch (e) {
        results[name] = { report: '', exitCode: null, error: String(e) }
      }
    }
    out.push(results)
  }
  await rt.dispose()
  for (const s of sandboxes.values()) await s.dispose()
  return out
}
