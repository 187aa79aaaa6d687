// The launcher runs as SCHED_BATCH (so its fork of the next idle supervisor never preempts the
// supervisor answering the host), and nothing it starts inherits that: a command, confined or
// only supervised, runs under the host's own policy. Read from /proc, against the real launcher.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { launcherPids } from '../../../src/subprocess/launcher/launch.js'
import { describeWithBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const SCHED_OTHER = 0
const SCHED_BATCH = 3
const SCHED_IDLE = 5
const REPO = path.resolve(import.meta.dirname, '../../..')

/** The scheduling policy in a /proc/PID/stat line (field 41). */
function policyOf(stat: string): number {
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .trim()
    .split(' ')
  return Number(fields[41 - 3])
}

const workDir = () => scratchDir('cordon-sched')

await describeWithBackend('landlock', 'launcher scheduling policy', (sandbox) => {
  it('the launcher is batch; a confined and a supervised command run as the host does (SCHED_OTHER)', async () => {
    expect(policyOf(fs.readFileSync('/proc/self/stat', 'utf8'))).toBe(SCHED_OTHER)
    const cwd = workDir()
    const confined = sandbox().confine(specFor(['/bin/cat', '/proc/self/stat'], cwd), {
      mode: 'read-only',
      workspaceRoot: cwd,
    }).spec
    const inConfined = await runSpec(confined)
    expect(inConfined.exitCode).toBe(0)
    const supervised = await runSpec({ ...specFor(['/bin/cat', '/proc/self/stat'], cwd), supervise: true })
    expect(supervised.exitCode).toBe(0)

    // The control: the launchers these runs went through really are batch, so a command that
    // inherited their policy would read 3 here.
    const launchers = launcherPids()
    expect(launchers.length).toBeGreaterThanOrEqual(2)
    for (const pid of launchers) expect(policyOf(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))).toBe(SCHED_BATCH)
    expect(policyOf(inConfined.stdout)).toBe(SCHED_OTHER)
    expect(policyOf(supervised.stdout)).toBe(SCHED_OTHER)
  })

  it('a host under SCHED_IDLE keeps it for its launcher and its commands (no batch, no escalation)', () => {
    const seen = hostRun(['chrt', '--idle', '0'])
    for (const stat of seen.launchers) expect(policyOf(stat)).toBe(SCHED_IDLE)
    expect(policyOf(seen.command)).toBe(SCHED_IDLE)
  })

  it.skipIf(process.getuid?.() !== 0)('as uid 65534 too: the launcher is batch, the command is not', () => {
    const seen = hostRun(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'])
    for (const stat of seen.launchers) expect(policyOf(stat)).toBe(SCHED_BATCH)
    expect(policyOf(seen.command)).toBe(SCHED_OTHER)
  })
})

/** A host process started through `prefix` runs one confined command; what /proc said of it and its launchers. */
function hostRun(prefix: string[]): { command: string; launchers: string[] } {
  const cwd = workDir()
  fs.chmodSync(cwd, 0o777) // the host may be uid 65534: its HOME and workspace
  const script = `
    import { readFileSync } from 'node:fs'
    const { LocalSandbox, LocalSubprocessRuntime } = await import(${JSON.stringify(path.join(REPO, 'dist/index.js'))})
    const { launcherPids } = await import(${JSON.stringify(path.join(REPO, 'dist/subprocess/launcher/launch.js'))})
    const sb = await LocalSandbox.create({ backends: ['landlock'] })
    const rt = new LocalSubprocessRuntime()
    const spec = { argv: ['/bin/cat', '/proc/self/stat'], cwd: ${JSON.stringify(cwd)}, graceMs: 1000,
      stdio: { stdin: 'ignore', stdout: { maxBytes: 65536 }, stderr: { maxBytes: 65536 } } }
    const h = rt.spawn(sb.confine(spec, { mode: 'read-only', workspaceRoot: ${JSON.stringify(cwd)} }).spec)
    const out = await h.done
    const launchers = launcherPids().map((pid) => readFileSync('/proc/' + pid + '/stat', 'utf8'))
    console.log(JSON.stringify({ exit: out.exitCode, command: h.collected.stdout.readFrom(0).text, launchers }))
    await rt.dispose(); await sb.dispose()`
  const [program, ...args] = prefix
  const r = spawnSync(program!, [...args, process.execPath, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH, HOME: cwd },
  })
  expect(r.status, r.stderr).toBe(0)
  const seen = JSON.parse(r.stdout) as { exit: number; command: string; launchers: string[] }
  expect(seen.exit).toBe(0)
  expect(seen.launchers.length).toBeGreaterThanOrEqual(1)
  return seen
}
