/**
 * Runs escape attacks through a LocalSandbox as whoever this process is (root in the test
 * process, nobody in the unprivileged runner), and reports per attack: the run, what changed
 * outside the grant (a snapshot diff), and what reached the host's listeners and helper.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import crypto from 'node:crypto'
import dgram from 'node:dgram'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import type { LocalSandbox } from '../../src/sandbox/local-sandbox.js'
import { runSpec, specFor } from '../support/run-confined.js'
import type { Attack, AttackMode } from './attacks.js'

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

/** One attack's outcome under one mode. */
export interface AttackOutcome {
  name: string
  mode: AttackMode
  uid: number
  exitCode: number | null
  stdout: string
  stderr: string
  /** Paths outside the grant whose state changed (must be empty). */
  changed: string[]
  /** Connections/datagrams that reached the host listeners during the attack (must be 0). */
  received: number
  /** The unconfined helper survived. */
  helperAlive: boolean
}

interface Entry {
  type: string
  mode: number
  uid: number
  gid: number
  size: number
  mtimeMs: number
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
  out.set(root, { type, mode: st.mode, uid: st.uid, gid: st.gid, size: st.size, mtimeMs: st.mtimeMs, digest })
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
  try {
    execXattr(path.join(root, 'file'))
  } catch {
    // xattrs unsupported here: the xattr attack then only checks it is refused
  }
  return { root, out }
}

function execXattr(file: string): void {
  // Node has no xattr API; python sets the one xattr the removexattr attack targets.
  const r = spawnSync('/usr/bin/python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "user.keep", b"1")', file], {
    stdio: 'ignore',
  })
  if (r.status !== 0) throw new Error('no xattrs')
}

function xattrs(file: string): string {
  return spawnSync(
    '/usr/bin/python3',
    ['-c', 'import os,sys; print(sorted((n, os.getxattr(sys.argv[1], n)) for n in os.listxattr(sys.argv[1])))', file],
    { encoding: 'utf8' },
  ).stdout
}

function mountinfoHas(tag: string): boolean {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(tag)
}

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null
}

/** Runs every attack under each of its modes through `sandbox`, in `base` (an empty dir this uid owns). */
export async function runAttacks(
  sandbox: LocalSandbox,
  attacks: readonly Attack[],
  base: string,
): Promise<AttackOutcome[]> {
  const tag = `${process.pid}-${crypto.randomBytes(4).toString('hex')}`
  let received = 0
  const tcp = net.createServer((s) => {
    received++
    s.destroy()
  })
  const abstractName = `cordon-escape-${tag}`
  // Node's listen('\0name') does not bind that abstract name on this libuv, so a python3
  // listener owns it: one line per accepted connection (counted as received).
  const abstract = spawn('python3', ['-u', '-c', ABSTRACT_LISTENER, abstractName], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const abstractReady = new Promise<void>((resolve) => {
    abstract.stdout!.setEncoding('utf8').on('data', (text: string) => {
      for (const line of text.split('\n')) {
        if (line === 'ready') resolve()
        if (line === 'accepted') received++
      }
    })
  })
  const udp = dgram.createSocket('udp4')
  udp.on('message', () => received++)
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r))
  await abstractReady
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r))
  const tcpPort = (tcp.address() as net.AddressInfo).port
  const udpPort = udp.address().port
  const watched = ['/tmp', '/var/tmp', '/dev/shm', '/dev', process.cwd()]
  const outcomes: AttackOutcome[] = []
  try {
    for (const attack of attacks) {
      for (const mode of attack.modes) {
        const { root, out } = resetFixture(base)
        const helper = spawn('sleep', ['120'], { cwd: out, stdio: 'ignore' })
        await new Promise((r) => helper.once('spawn', r))
        const skip = mode === 'workspace-write' ? [root] : []
        const before = new Map<string, Entry>()
        snapshotTree(base, skip, before)
        const xattrBefore = xattrs(path.join(root, 'file'))
        const receivedBefore = received
        const confined = sandbox.confine(
          specFor(['/bin/sh', '-c', attack.script], root, {
            ROOT: root,
            OUT: out,
            BASE: base,
            TAG: tag,
            HOSTPID: String(process.pid),
            HELPER: String(helper.pid),
            TCPPORT: String(tcpPort),
            UDPPORT: String(udpPort),
            ABSTRACT: abstractName,
            PY: '/usr/bin/python3',
            PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
            LC_ALL: 'C',
          }),
          { mode, workspaceRoot: root, sessionId: 'escape', ...(attack.network ? { network: attack.network } : {}) },
        )
        const result = await runSpec(confined.spec)
        await new Promise((r) => setTimeout(r, 20)) // let late datagrams/connections land
        const after = new Map<string, Entry>()
        snapshotTree(base, skip, after)
        const changed = diff(before, after)
        if (mode === 'read-only' && xattrs(path.join(root, 'file')) !== xattrBefore)
          changed.push(`xattrs changed on ${root}/file`)
        changed.push(...tagged(watched, tag).map((p) => `created ${p}`))
        if (mountinfoHas(`cordon-${tag}`)) changed.push('a mount appeared')
        const helperAlive = isAlive(helper)
        helper.kill('SIGKILL')
        outcomes.push({
          name: attack.name,
          mode,
          uid: process.getuid?.() ?? -1,
          exitCode: result.exitCode,
          stdout: result.stdout,
          stderr: result.stderr,
          changed,
          received: received - receivedBefore,
          helperAlive,
        })
        for (const p of tagged(watched, tag)) fs.rmSync(p, { recursive: true, force: true })
      }
    }
  } finally {
    tcp.close()
    abstract.stdin!.end() // the listener exits when its stdin closes
    udp.close()
  }
  return outcomes
}
