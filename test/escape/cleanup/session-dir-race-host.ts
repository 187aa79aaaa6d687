// The host side of test/escape/cleanup/session-dir-race.test.ts, run as root or as uid 65534 through
// run-as.ts. argv: <json args>; prints { rounds, hits } on stdout.
// - fs-rm (the control): an unconfined link-swap racer in a tree, removed by Node's fs.rm; rounds
//   until the first host file is lost (at most args.rounds).
// - dispose: a confined racer in its session's TMPDIR (args.backend, workspace-write), then the
//   sandbox is disposed while it races; args.rounds rounds, hits = rounds that lost a host file.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { linkSwapRacer, racing, victimDir } from './swap-racer.js'

interface Args {
  how: 'fs-rm' | 'dispose'
  backend: SandboxBackendName
  base: string
  rounds: number
  files: number
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args
const racer = linkSwapRacer(args.files)
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' }

async function fsRm(): Promise<{ rounds: number; hits: number }> {
  let round = 0
  while (round < args.rounds) {
    round++
    const v = victimDir(args.base, args.files)
    const tree = path.join(args.base, `tree${round}`)
    fs.mkdirSync(tree)
    const child = spawn('python3', ['-c', racer, tree, v.dir], { stdio: ['ignore', 'pipe', 'inherit'], env })
    await racing(child)
    await new Promise<void>((resolve) => fs.rm(tree, { recursive: true, force: true }, () => resolve()))
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    fs.rmSync(tree, { recursive: true, force: true })
    if (v.left() < args.files) return { rounds: round, hits: 1 }
  }
  return { rounds: round, hits: 0 }
}

async function dispose(): Promise<{ rounds: number; hits: number }> {
  const ws = path.join(args.base, 'ws')
  fs.mkdirSync(ws, { recursive: true })
  const rt = new LocalSubprocessRuntime()
  let hits = 0
  // Probed once: each round disposes a sandbox of its own, not a probe.
  const probed = await LocalSandbox.create({ backends: [args.backend] })
  const capabilities = probed.capabilities
  await probed.dispose()
  for (let round = 0; round < args.rounds; round++) {
    const v = victimDir(args.base, args.files)
    const sandbox = await LocalSandbox.create({ backends: [args.backend], capabilities })
    const confined = sandbox.confine(
      {
        argv: [
          'python3',
          '-c',
          `import os, sys; sys.argv = ['', os.environ['TMPDIR'] + '/t', sys.argv[1]]\n${racer}`,
          v.dir,
        ],
        cwd: ws,
        env,
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' },
        graceMs: 200,
      },
      { mode: 'workspace-write', workspaceRoot: ws, sessionId: `race${round}` },
    )
    if (confined.backend !== args.backend) throw new Error(`confined by ${confined.backend}, not ${args.backend}`)
    const handle = rt.spawn(confined.spec)
    await racing(handle)
    // Reach: the racer's tree is in the session dir the host is about to remove.
    const made = fs.readdirSync(path.join(confined.tempDir as string, 't')).sort()
    if (made.join() !== 'a,b') throw new Error(`the racer's tree is not where the host removes: ${made}`)
    await sandbox.dispose()
    handle.terminate()
    await handle.done.catch(() => undefined)
    if (v.left() < args.files) hits++
  }
  await rt.dispose()
  return { rounds: args.rounds, hits }
}

const result = args.how === 'fs-rm' ? await fsRm() : await dispose()
process.stdout.write(`${JSON.stringify(result)}\n`)
