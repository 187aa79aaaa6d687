// TIOCSTI (this host has dev.tty.legacy_tiocsti = 1): a confined command whose stdout is the
// host's terminal must not push keystrokes into it. Every confined child leads a new session
// without a controlling terminal and holds no CAP_SYS_ADMIN, so the kernel refuses the ioctl.
// Real pty, real kernel: python3 makes the terminal, a Node host (over dist/) runs the command.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { describeWithBackend } from '../support/backends.js'
import { scratchDir } from '../support/scratch.js'

const repo = join(import.meta.dirname, '..', '..')

const INJECT =
  "import fcntl, termios, sys\ntry:\n    [fcntl.ioctl(1, termios.TIOCSTI, bytes([c])) for c in b'id\\n']\n    print('INJECTED', file=sys.stderr)\nexcept OSError as e:\n    print('REFUSED', e.errno, file=sys.stderr)\n"

it('control: the same injection works from a process whose controlling terminal it is', () => {
  // Proves the harness can see an injection: pty.fork() makes the pty the child's ctty.
  const control = `
import os, pty, sys
pid, master = pty.fork()
if pid == 0:
    os.execvp('python3', ['python3', '-c', sys.argv[1]])
out = b''
while True:
    try:
        chunk = os.read(master, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace'))
`
  const r = spawnSync('python3', ['-c', control, INJECT], { encoding: 'utf8', timeout: 30_000 })
  expect(r.stdout).toContain('INJECTED')
})

await describeWithBackend('landlock', 'TIOCSTI into the host terminal', () => {
  it.each(['read-only', 'workspace-write'])('is refused under %s, and no keystroke reaches the terminal', (mode) => {
    const dir = scratchDir('cordon-tiocsti')
    const host = join(dir, 'host.mjs')
    // The command injects "id\n" through fd 1, which is the terminal the host itself inherited.
    const inject = INJECT
    writeFileSync(
      host,
      `import { LocalSandbox, LocalSubprocessRuntime } from ${JSON.stringify(join(repo, 'dist', 'index.js'))}\n` +
        `const sandbox = await LocalSandbox.create()\n` +
        `const rt = new LocalSubprocessRuntime()\n` +
        `const spec = { argv: ['python3', '-c', ${JSON.stringify(inject)}], cwd: ${JSON.stringify(dir)}, graceMs: 1000, stdio: { stdin: 'ignore', stdout: 'inherit', stderr: { maxBytes: 4096 } } }\n` +
        `const h = rt.spawn(sandbox.confine(spec, { mode: ${JSON.stringify(mode)}, workspaceRoot: ${JSON.stringify(dir)} }).spec)\n` +
        `const out = await h.done\n` +
        `process.stderr.write(JSON.stringify({ out, stderr: h.collected.stderr.readFrom(0).text }) + '\\n')\n` +
        `await rt.dispose(); await sandbox.dispose()\n`,
    )
    // python3 owns the pty: the Node host gets the slave as stdin/stdout; afterwards whatever was
    // queued as terminal input is read back from the slave side.
    const terminal = `
import os, pty, select, subprocess, sys, termios, tty
master, slave = pty.openpty()
tty.setraw(slave)
p = subprocess.run([sys.argv[1], sys.argv[2]], stdin=slave, stdout=slave, stderr=subprocess.PIPE)
os.set_blocking(slave, False)
queued = b''
try:
    queued = os.read(slave, 100)
except BlockingIOError:
    pass
sys.stdout.write(p.stderr.decode() + 'QUEUED ' + repr(queued) + '\\n')
`
    const r = spawnSync('python3', ['-c', terminal, process.execPath, host], { encoding: 'utf8', timeout: 60_000 })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/REFUSED 1\b/)
    expect(r.stdout).not.toContain('INJECTED')
    expect(r.stdout).toContain("QUEUED b''")
  })
})
