// Resident bubblewrap instances end to end: runs of one plan share one bwrap, and nothing one run
// leaves reaches the next beyond what runs of one sandbox share anyway (its temp dir and /dev/shm).
// Each attack fails under cordon and has its control: the same attack succeeding where the
// isolation does not apply (unconfined, or inside the attacker's own run).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { processesWith } from '../../../src/sandbox/probe/canary.js'
import { LocalShellExecutor, type ShellSandbox } from '../../../src/shell/executor.js'
import type { ShellProcess } from '../../../src/shell/types.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { describeWithBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { eventually } from '../../support/subprocess/processes.js'

/** The host pids of the resident instances whose launcher names `root` in its rules. */
const instancesFor = (root: string) =>
  processesWith(`\0instance\0--control-fd\0`).filter((pid) => cmdlineHas(pid, root) && cmdlineHas(pid, 'bwrap\0'))

function cmdlineHas(pid: number, text: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)
  } catch {
    return false
  }
}

/** Reads a background job's output until it matches `pattern`; the whole output so far. */
async function outputUntil(job: ShellProcess, pattern: RegExp): Promise<string> {
  let text = ''
  const seen = await eventually(() => {
    text += job.readOutput().delta
    return pattern.test(text)
  }, 10_000)
  if (!seen) throw new Error(`no ${pattern} in the job's output: ${text}`)
  return text
}

const owned: Array<{ dispose(): Promise<void> }> = []
afterAll(async () => {
  for (const o of owned.reverse()) await o.dispose()
})

function executorFor(sandbox: ShellSandbox, root: string): LocalShellExecutor {
  const subprocess = new LocalSubprocessRuntime()
  const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, subprocess, graceMs: 500 })
  owned.push(subprocess, executor)
  return executor
}

await describeWithBackend('bubblewrap', 'resident bubblewrap instances', (sandbox) => {
  const ww = (root: string): SandboxExecutionPolicy => ({
    mode: 'workspace-write',
    workspaceRoot: root,
    network: 'deny',
  })

  it('runs of one plan share one bwrap; its own pid 1 is a supervisor without capabilities', async () => {
    const root = scratchDir('cordon-resident-share')
    const executor = executorFor(sandbox(), root)
    const run = (command: string) => executor.run(executor.resolve({ command, sandboxPolicy: ww(root) }))
    await run('true')
    await run('true') // the read view watches from the second plan on: a new plan, once
    // The first plan's instance, retired, ends once its idle supervisor saw the socket close.
    expect(await eventually(() => instancesFor(root).length === 1, 10_000)).toBe(true)
    const before = instancesFor(root)
    expect(before).toHaveLength(1)
    const r = await run(
      'grep -E "^(CapEff|CapBnd|CapPrm)" /proc/1/status; grep -E "^(CapEff|CapBnd)" /proc/self/status',
    )
    expect(r.exitCode).toBe(0)
    expect(r.stdout.text.trim().split('\n')).toEqual([
      'CapPrm:\t0000000000000000',
      'CapEff:\t0000000000000000',
      'CapBnd:\t0000000000000000',
      'CapEff:\t0000000000000000',
      'CapBnd:\t0000000000000000',
    ])
    expect(instancesFor(root)).toEqual(before)
  })

  it('runs share the instance user namespace (named in the limits), never their pid, IPC or network one', async () => {
    const root = scratchDir('cordon-resident-userns-shared')
    const ns = 'readlink /proc/self/ns/user /proc/self/ns/pid /proc/self/ns/ipc /proc/self/ns/net'
    // Two runs alive at once: a namespace's id is reused once it is freed, so one run holds its own.
    const side = async (executor: LocalShellExecutor) => {
      const job = executor.start(executor.resolve({ command: `${ns}; sleep 30`, sandboxPolicy: ww(root) }))
      try {
        const held = (await outputUntil(job, /net:\[\d+\]/)).split('\n')
        const r = await executor.run(executor.resolve({ command: ns, sandboxPolicy: ww(root) }))
        return [held, r.stdout.text.split('\n')] as const
      } finally {
        job.kill()
        await job.done
      }
    }
    const executor = executorFor(sandbox(), root)
    await executor.run(executor.resolve({ command: 'true', sandboxPolicy: ww(root) }))
    const [a, b] = await side(executor)
    expect(a[0]).toBe(b[0])
    for (const i of [1, 2, 3]) expect(a[i]).not.toBe(b[i])
    expect(sandbox().capabilities.backends.bubblewrap?.limitations.join('\n')).toMatch(
      /share a resident bwrap instance and its user namespace/,
    )
    // Control: a bwrap per run gives each run a user namespace of its own.
    const perRun = await LocalSandbox.create({
      backends: ['bubblewrap'],
      capabilities: sandbox().capabilities,
      residentInstances: false,
    })
    owned.push(perRun)
    const [c, d] = await side(executorFor(perRun, root))
    expect(c[0]).not.toBe(d[0])
  })

  it('no user namespace can be made inside (the init keeps capabilities); the host can', async () => {
    const root = scratchDir('cordon-resident-userns')
    const executor = executorFor(sandbox(), root)
    const attack = 'unshare --user true && echo made || echo refused'
    const r = await executor.run(executor.resolve({ command: attack, sandboxPolicy: ww(root) }))
    expect(r.stdout.text).toBe('refused\n')
    // Control: the same attack on the host.
    expect(spawnSync('bash', ['-c', attack], { encoding: 'utf8' }).stdout).toBe('made\n')
  })

  it('a daemon a run leaves is gone before the next run starts; unconfined it lives on', async () => {
    const root = scratchDir('cordon-resident-daemon')
    const executor = executorFor(sandbox(), root)
    const marker = `cordon-daemon-${process.pid}-${Date.now()}`
    const daemon = `setsid bash -c 'exec -a ${marker} sleep 300' </dev/null >/dev/null 2>&1 & echo started`
    const r = await executor.run(executor.resolve({ command: daemon, sandboxPolicy: ww(root) }))
    expect(r.stdout.text).toBe('started\n')
    expect(processesWith(marker)).toEqual([])
    // Control: unconfined, the daemon outlives the command that started it.
    spawnSync('bash', ['-c', daemon])
    expect(await eventually(() => processesWith(marker).length === 1, 10_000)).toBe(true)
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL')
  })

  it('a later run cannot see or signal a background job of the same instance; the job itself can', async () => {
    const root = scratchDir('cordon-resident-signal')
    const executor = executorFor(sandbox(), root)
    const marker = `cordon-job-${process.pid}-${Date.now()}`
    // A pattern that does not match the shell that carries it.
    const pattern = `cordon-jo[b]-${marker.slice('cordon-job-'.length)}`
    const job = executor.start(
      executor.resolve({
        command: `bash -c 'exec -a ${marker} sleep 60' & for i in $(seq 100); do pgrep -f "${pattern}" >/dev/null && { echo own-run-sees; break; }; sleep 0.1; done; wait`,
        sandboxPolicy: ww(root),
      }),
    )
    try {
      // Control: inside its own run the job's process is there to signal.
      await outputUntil(job, /own-run-sees/)
      const attack = `pgrep -f "${pattern}" && pkill -f "${pattern}"; echo "seen=$?"`
      const r = await executor.run(executor.resolve({ command: attack, sandboxPolicy: ww(root) }))
      expect(r.stdout.text).toBe('seen=1\n')
      expect(processesWith(`${marker}\0`)).toHaveLength(1) // alive, untouched (its argv0; its shell names it too)
    } finally {
      job.kill()
      await job.done
    }
  })

  it('a pty of one run is not reachable from the next; within its run it is', async () => {
    const root = scratchDir('cordon-resident-pty')
    const executor = executorFor(sandbox(), root)
    const opener = `import os, pty, sys, time
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
os.close(os.open(os.ttyname(s), os.O_RDWR))
print("own-run-opens", flush=True)
time.sleep(60)`
    fs.writeFileSync(path.join(root, 'opener.py'), opener)
    const job = executor.start(executor.resolve({ command: 'exec python3 opener.py', sandboxPolicy: ww(root) }))
    try {
      const out = await outputUntil(job, /own-run-opens/) // the control: its own run opens it
      const name = /\/dev\/pts\/\d+/.exec(out)?.[0]
      expect(name).toBeDefined()
      const attack = `ls /dev/pts; exec 3<>${name} && echo opened || echo refused`
      const r = await executor.run(executor.resolve({ command: attack, sandboxPolicy: ww(root) }))
      expect(r.stdout.text).toBe('ptmx\nrefused\n')
    } finally {
      job.kill()
      await job.done
    }
  })

  it('a file in /dev/shm reaches the next run of its sandbox, never another sandbox', async () => {
    const root = scratchDir('cordon-resident-shm')
    const other = await LocalSandbox.create({ backends: ['bubblewrap'], capabilities: sandbox().capabilities })
    owned.push(other)
    const mine = executorFor(sandbox(), root)
    const theirs = executorFor(other, root)
    const name = `cordon-shm-${process.pid}`
    await mine.run(mine.resolve({ command: `echo secret > /dev/shm/${name}`, sandboxPolicy: ww(root) }))
    const read = `cat /dev/shm/${name} 2>/dev/null || echo missing`
    // Control: the next run of the same sandbox shares its /dev/shm.
    const same = await mine.run(mine.resolve({ command: read, sandboxPolicy: ww(root) }))
    expect(same.stdout.text).toBe('secret\n')
    const across = await theirs.run(theirs.resolve({ command: read, sandboxPolicy: ww(root) }))
    expect(across.stdout.text).toBe('missing\n')
  })

  it('a protected path created between runs is protected at the next run; unconfined it is writable', async () => {
    const root = scratchDir('cordon-resident-protect')
    const executor = executorFor(sandbox(), root)
    const run = (command: string) => executor.run(executor.resolve({ command, sandboxPolicy: ww(root) }))
    await run('true')
    await run('true')
    const nested = path.join(root, 'nested')
    fs.mkdirSync(path.join(nested, '.git', 'hooks'), { recursive: true })
    fs.writeFileSync(path.join(nested, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    const attack = 'echo evil > nested/.git/hooks/pre-commit && echo wrote || echo refused'
    const r = await run(attack)
    expect(r.stdout.text).toBe('refused\n')
    expect(fs.existsSync(path.join(nested, '.git', 'hooks', 'pre-commit'))).toBe(false)
    // Control: the same write unconfined.
    expect(spawnSync('bash', ['-c', attack], { cwd: root, encoding: 'utf8' }).stdout).toBe('wrote\n')
  })

  it('a host file renamed over a bound one shows its new content at the next run', async () => {
    const base = scratchDir('cordon-resident-rename')
    const root = path.join(base, 'root')
    const etc = path.join(base, 'etc')
    for (const d of [root, etc]) fs.mkdirSync(d)
    fs.writeFileSync(path.join(etc, 'secret'), 'hidden\n')
    fs.writeFileSync(path.join(etc, 'resolv'), 'old\n')
    const executor = executorFor(sandbox(), root)
    // The hidden file makes etc a shell: each other child of it is bound in on its own.
    const policy = { ...ww(root), hiddenPaths: [path.join(etc, 'secret')] }
    const run = (command: string) => executor.run(executor.resolve({ command, sandboxPolicy: policy }))
    await run('true')
    // Control: the instance shows the file as it was bound, and the hidden one empty.
    const first = await run(`cat ${etc}/resolv; cat ${etc}/secret; echo end`)
    expect(first.stdout.text).toBe('old\nend\n')
    fs.writeFileSync(path.join(etc, 'resolv.new'), 'new\n')
    fs.renameSync(path.join(etc, 'resolv.new'), path.join(etc, 'resolv'))
    const second = await run(`cat ${etc}/resolv`)
    expect(second.stdout.text).toBe('new\n')
  })

  it('a socket the policy allows, made anew by its host service, is the new one at the next run', async () => {
    const base = scratchDir('cordon-resident-socket')
    const root = path.join(base, 'root')
    const agent = path.join(base, 'agent')
    for (const d of [root, agent]) fs.mkdirSync(d)
    const sock = path.join(agent, 'agent.sock')
    const serve = async (reply: string) => {
      const server = net.createServer((c) => {
        c.on('error', () => {})
        c.end(`${reply}\n`)
      })
      await new Promise<void>((r) => server.listen(sock, r))
      return server
    }
    const withAgent = await LocalSandbox.create({
      backends: ['bubblewrap'],
      capabilities: sandbox().capabilities,
      env: { ...process.env, SSH_AUTH_SOCK: sock },
    })
    owned.push(withAgent)
    const executor = executorFor(withAgent, root)
    const policy = { ...ww(root), network: 'inherit' as const, allowUnixSockets: [sock] }
    const connect = `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(9).decode().strip())" ${sock}`
    const run = async () =>
      (await executor.run(executor.resolve({ command: connect, sandboxPolicy: policy }))).stdout.text
    const first = await serve('ONE')
    try {
      await run()
      expect(await run()).toBe('ONE\n') // the control: the bound socket works in the instance
    } finally {
      await new Promise((r) => first.close(r))
    }
    fs.rmSync(sock, { force: true })
    const second = await serve('TWO')
    try {
      expect(await run()).toBe('TWO\n')
    } finally {
      await new Promise((r) => second.close(r))
    }
  })
})
