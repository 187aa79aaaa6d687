/**
 * Runs escape attacks as whoever this process is (the runner: root, or uid 65534 through
 * setpriv), either confined through a LocalSandbox under each of their modes or unconfined once
 * each (the control), and reports per run: the output, what changed outside the grant (a snapshot
 * diff of the files, the host objects of host-fixtures.py, the helper's and the runner's process
 * state), what reached the host's listeners, and whether the helper survived.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import crypto from 'node:crypto'
import dgram from 'node:dgram'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import type { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { alive } from '../../support/subprocess/processes.js'
import { runSpec, specFor, type RunResult } from '../../support/sandbox/run-confined.js'
import type { Attack, AttackMode } from './attack.js'
import { HostObjects, PYTHON } from '../host/host-objects.js'

/** Listens on the abstract unix name argv[1]; prints `ready`, then `accepted` per connection. */
export const ABSTRACT_LISTENER = `
import os, select, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind('\\0' + sys.argv[1])
s.listen(16)
print('ready')
while True:
    r, _, _ = select.select([s, sys.stdin], [], [])
    if sys.stdin in r:
        if not os.read(sys.stdin.fileno(), 1024):
            break
    if s in r:
        c, _ = s.accept()
        print('accepted')
        c.sendall(b'hi')
        c.close()
`

/** One attack's outcome under one mode, or unconfined (`control`). */
export interface AttackOutcome {
  name: string
  mode: AttackMode | 'control'
  uid: number
  exitCode: number | null
  stdout: string
  stderr: string
  /** What changed outside the grant: paths, host objects, host processes (must be empty). */
  changed: string[]
  /** Connections/datagrams that reached the host listeners during the attack (must be 0). */
  received: number
  /** The unconfined helper survived. */
  helperAlive: boolean
  /** The run's enforcement account, class by class (confined runs only). */
  account?: Record<string, { governed: boolean; how: string }>
  /** Wall time of the whole attack, fixtures and checks included. */
  ms: number
  /** The runner could not run the attack at all (a spawn error, a fixture failure). */
  error?: string
}

/** Whether an outcome shows the attack's effect: a BREACH line, a change outside, a connection, a dead helper. */
export function breached(o: AttackOutcome): boolean {
  return o.stdout.includes('BREACH') || o.changed.length > 0 || o.received > 0 || !o.helperAlive
}

interface Entry {
  type: string
  mode: number
  uid: number
  gid: number
  size: number
  mtimeMs: number
  ctimeMs: number
  digest: string
}

function snapshotTree(root: string, skip: readonly string[], out: Map<string, Entry>): void {
  let st: fs.Stats
  try {
    st = fs.lstatSync(root)
  } catch {
    return
  }
  if (skip.includes(root)) return
  const type = st.isDirectory()
    ? 'dir'
    : st.isSymbolicLink()
      ? 'link'
      : st.isFile()
        ? 'file'
        : st.isFIFO()
          ? 'fifo'
          : st.isSocket()
            ? 'sock'
            : 'other'
  let digest = ''
  if (type === 'file') digest = crypto.createHash('sha1').update(fs.readFileSync(root)).digest('hex')
  if (type === 'link') digest = fs.readlinkSync(root)
  // ctime: an inode change without a content change (ioctls, leases of writers, link counts)
  const ctimeMs = type === 'dir' ? 0 : st.ctimeMs
  out.set(root, {
    type,
    mode: st.mode,
    uid: st.uid,
    gid: st.gid,
    size: st.size,
    mtimeMs: st.mtimeMs,
    ctimeMs,
    digest,
  })
  if (type === 'dir') for (const name of fs.readdirSync(root)) snapshotTree(path.join(root, name), skip, out)
}

function tagged(dirs: readonly string[], tag: string): string[] {
  return dirs.flatMap((d) => {
    try {
      return fs
        .readdirSync(d)
        .filter((n) => n.includes(tag))
        .map((n) => path.join(d, n))
    } catch {
      return []
    }
  })
}

function diff(before: Map<string, Entry>, after: Map<string, Entry>): string[] {
  const changed: string[] = []
  for (const [p, e] of before) {
    const a = after.get(p)
    if (!a) changed.push(`removed ${p}`)
    else if (JSON.stringify(a) !== JSON.stringify(e))
      changed.push(`changed ${p}: ${JSON.stringify(e)} -> ${JSON.stringify(a)}`)
  }
  for (const p of after.keys()) if (!before.has(p)) changed.push(`created ${p}`)
  return changed
}

/** Lays out BASE/{root, root2, outside}: files the attacks aim at, writable by this uid's DAC. */
function resetFixture(base: string): { root: string; out: string } {
  const root = path.join(base, 'root')
  const out = path.join(base, 'outside')
  if (!fs.existsSync(root)) {
    // an attack may have moved the root away; the workspace root is always BASE/root
    for (const name of fs.readdirSync(base)) fs.rmSync(path.join(base, name), { recursive: true, force: true })
  }
  for (const name of fs.readdirSync(base))
    if (name !== 'root') fs.rmSync(path.join(base, name), { recursive: true, force: true })
  fs.mkdirSync(root, { recursive: true, mode: 0o777 })
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true })
  fs.chmodSync(root, 0o777)
  fs.mkdirSync(out, { mode: 0o777 })
  fs.mkdirSync(path.join(out, 'dir'), { mode: 0o777 })
  fs.writeFileSync(path.join(out, 'dir', 'f'), 'f')
  fs.mkdirSync(`${root}2`, { mode: 0o777 })
  fs.writeFileSync(path.join(out, 'victim'), 'original\n', { mode: 0o666 })
  fs.writeFileSync(path.join(root, 'file'), 'root file\n', { mode: 0o666 })
  fs.writeFileSync(path.join(root, 'moveme'), 'move me\n', { mode: 0o666 })
  fs.symlinkSync(out, path.join(root, 'link'))
  const fixedTime = new Date('2020-01-01T00:00:00Z')
  for (const p of [path.join(out, 'victim'), path.join(root, 'file')]) fs.utimesSync(p, fixedTime, fixedTime)
  return { root, out }
}

function mountinfoHas(tag: string): boolean {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(tag)
}

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null
}

/** Runs `script` unconfined, as this process's user: Node's own spawn, nothing of cordon's. */
function runUnconfined(attack: Attack, cwd: string, env: NodeJS.ProcessEnv, leak: string): Promise<RunResult> {
  const argv = [...(attack.control?.wrap ?? []), '/bin/sh', '-c', attack.script]
  const extra = attack.control?.leakFd ? [fs.openSync(leak, 'a')] : []
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe', ...extra],
    timeout: 20_000,
    killSignal: 'SIGKILL',
  })
  for (const fd of extra) fs.closeSync(fd)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (t: string) => {
    stdout += t
  })
  child.stderr!.setEncoding('utf8').on('data', (t: string) => {
    stderr += t
  })
  return new Promise((resolve) => {
    child.on('error', (e) => resolve({ stdout, stderr: `${stderr}${e.message}`, exitCode: null, signal: null }))
    child.on('close', (exitCode, signal) => resolve({ stdout, stderr, exitCode, signal }))
  })
}

/** How runAttacks runs each attack: confined through `sandbox` under each of its modes, or unconfined once. */
export type AttackRunMode = { sandbox: LocalSandbox } | { control: true }

/** How many attacks a runner has in flight at once (each in a lane of its own). */
const LANES = 2

/**
 * One lane: a fixture dir, host listeners, host objects and a tag of its own, so the attacks of
 * two lanes never see each other's effects.
 */
class Lane {
  readonly tag = `${process.pid}-${crypto.randomBytes(4).toString('hex')}`
  private received = 0
  private readonly tcp = net.createServer((s) => {
    this.received++
    s.destroy()
  })
  private readonly udp = dgram.createSocket('udp4')
  private abstract: ChildProcess | undefined
  private readonly host = new HostObjects()
  private readonly abstractName = `cordon-escape-${this.tag}`
  private readonly watched = ['/tmp', '/var/tmp', '/dev/shm', '/dev', process.cwd()]

  constructor(
    private readonly how: AttackRunMode,
    private readonly base: string,
  ) {}

  async open(): Promise<void> {
    // Node's listen('\0name') does not bind that abstract name on this libuv, so a python3
    // listener owns it: one line per accepted connection (counted as received).
    const abstract = spawn(PYTHON, ['-u', '-c', ABSTRACT_LISTENER, this.abstractName], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    this.abstract = abstract
    const abstractReady = new Promise<void>((resolve) => {
      abstract.stdout!.setEncoding('utf8').on('data', (text: string) => {
        for (const line of text.split('\n')) {
          if (line === 'ready') resolve()
          if (line === 'accepted') this.received++
        }
      })
    })
    this.udp.on('message', () => this.received++)
    await new Promise<void>((r) => this.tcp.listen(0, '127.0.0.1', r))
    await abstractReady
    await new Promise<void>((r) => this.udp.bind(0, '127.0.0.1', r))
  }

  async close(): Promise<void> {
    await this.host.close()
    this.tcp.close()
    this.abstract?.stdin?.end() // the listener exits when its stdin closes
    this.udp.close()
  }

  /** Runs one attack under `mode` (or as its control) and reports it. */
  async run(attack: Attack, mode: AttackMode | 'control'): Promise<AttackOutcome> {
    const { base, how, tag } = this
    const t0 = performance.now()
    const { root, out } = resetFixture(base)
    // The helper lives as long as its stdin pipe: a runner that dies takes it along (an orphan would
    // hold its session keyring, and leaked keyrings exhaust the uid's key quota for later runs).
    const helper = spawn('cat', [], { cwd: out, stdio: ['pipe', 'ignore', 'ignore'] })
    await new Promise((r) => helper.once('spawn', r))
    const objects = await this.host.setup(tag, { out, root }, [helper.pid!, process.pid])
    const skip = mode === 'workspace-write' ? [root] : []
    const before = new Map<string, Entry>()
    snapshotTree(base, skip, before)
    const hostBefore = await this.host.inspect(false)
    const receivedBefore = this.received
    const env = {
      ROOT: root,
      OUT: out,
      BASE: base,
      TAG: tag,
      HOSTPID: String(process.pid),
      HELPER: String(helper.pid),
      TCPPORT: String((this.tcp.address() as net.AddressInfo).port),
      UDPPORT: String(this.udp.address().port),
      ABSTRACT: this.abstractName,
      PY: PYTHON,
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      LC_ALL: 'C',
      ...objects,
    }
    let result: RunResult
    let account: AttackOutcome['account']
    let error: string | undefined
    try {
      if ('control' in how || mode === 'control') {
        result = await runUnconfined(attack, root, env, path.join(base, 'leaked'))
      } else {
        const confined = how.sandbox.confine(specFor(['/bin/sh', '-c', attack.script], root, env), {
          mode,
          workspaceRoot: root,
          sessionId: 'escape',
          ...(attack.network ? { network: attack.network } : {}),
          ...(attack.limits ? { limits: attack.limits } : {}),
        })
        account = confined.plan?.account.classes as AttackOutcome['account']
        result = await runSpec(confined.spec)
      }
    } catch (e) {
      error = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
      result = { stdout: '', stderr: '', exitCode: null, signal: null }
    }
    await new Promise((r) => setTimeout(r, 20)) // let late datagrams/connections land
    const after = new Map<string, Entry>()
    snapshotTree(base, skip, after)
    const changed = diff(before, after).filter((c) => !c.endsWith(path.join(base, 'leaked')))
    // the root file is the command's to change in workspace-write
    const mayChange = mode === 'workspace-write' ? ['root file xattrs'] : []
    changed.push(...this.host.changes(hostBefore, await this.host.inspect(true), mayChange))
    changed.push(...tagged(this.watched, tag).map((p) => `created ${p}`))
    if (mountinfoHas(`cordon-${tag}`)) {
      changed.push('a mount appeared')
      spawnSync('umount', ['-l', root])
    }
    // both: Node may not have seen the exit yet, and /proc shows an unreaped helper as a zombie
    const helperAlive = isAlive(helper) && alive(helper.pid!)
    helper.kill('SIGKILL')
    for (const p of tagged(this.watched, tag)) fs.rmSync(p, { recursive: true, force: true })
    return {
      name: attack.name,
      mode,
      uid: process.getuid?.() ?? -1,
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
      changed,
      received: this.received - receivedBefore,
      helperAlive,
      ms: Math.round(performance.now() - t0),
      ...(account ? { account } : {}),
      ...(error ? { error } : {}),
    }
  }
}

/** Runs every attack in `base` (an empty dir this uid owns), confined or as controls, a few at a time. */
export async function runAttacks(
  how: AttackRunMode,
  attacks: readonly Attack[],
  base: string,
): Promise<AttackOutcome[]> {
  type Run = { attack: Attack; mode: AttackMode | 'control' }
  const runs = attacks.flatMap((attack): Run[] =>
    'control' in how ? [{ attack, mode: 'control' }] : attack.modes.map((mode) => ({ attack, mode })),
  )
  const lanes = Array.from({ length: LANES }, (_, i) => {
    const dir = path.join(base, `lane${i}`)
    fs.mkdirSync(dir)
    return new Lane(how, dir)
  })
  const outcomes: AttackOutcome[] = new Array(runs.length)
  let next = 0
  try {
    await Promise.all(lanes.map((lane) => lane.open()))
    await Promise.all(
      lanes.map(async (lane) => {
        while (next < runs.length) {
          const i = next++
          const { attack, mode } = runs[i]!
          outcomes[i] = await lane.run(attack, mode)
        }
      }),
    )
  } finally {
    await Promise.all(lanes.map((lane) => lane.close()))
  }
  return outcomes
}
