// Faults (issue 28): the host SIGKILLed with confined trees running on both backends (a bash
// tool run, a background job, a job whose TMPDIR is a tmpfs, a terminal), each having left a
// `setsid` daemon. Nothing of theirs survives, and the next host start sweeps what the dead host
// left: its session dirs (the tmpfs unmounted) and its spill dir, but not those of a live host.
// Controls: every daemon ran in a session of its own before the kill, and the killed host's dirs
// and mount were still there after it, until the next start. test/faults/host-to-kill.ts is the host.
import { type ChildProcess, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { detachTemp, tempMountRefusal } from '../../src/subprocess/private-dirs/temp-mount.js'
import { needBackend, TEST_BACKENDS } from '../support/sandbox/backends.js'
import { scratchDir } from '../support/scratch.js'
import { alive, descendantsOf, eventually, processesMarked } from '../support/subprocess/processes.js'
import { ptyStatus } from '../support/subprocess/terminal.js'

const REPO = path.resolve(import.meta.dirname, '..', '..')
const HOST = path.join(REPO, 'test/faults/host-to-kill.ts')

const started: ChildProcess[] = []
const labels: string[] = []
const privateDirs: string[] = []
afterAll(() => {
  for (const host of started) host.kill('SIGKILL')
  for (const label of labels) for (const pid of processesMarked(label)) process.kill(pid, 'SIGKILL')
  // A test that failed before the next host swept leaves the killed host's tmpfs mounted: the
  // scratch dir's removal would stop at them.
  for (const dir of privateDirs) for (const point of new Set(mountsBelow(dir))) detachTemp(point)
})

/** Starts the host for `phase` with `privateDir` as cordon's private parent. */
function startHost(phase: 'kill' | 'next', privateDir: string, args: object): ChildProcess {
  const host = spawn(
    process.execPath,
    ['--import', path.join(REPO, 'test/fixtures/ts-hooks.mjs'), HOST, phase, JSON.stringify(args)],
    { cwd: '/', env: { ...process.env, CORDON_PRIVATE_DIR: privateDir }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  started.push(host)
  return host
}

/** The first line the host prints, or why it printed none. */
function firstLine(host: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    host.stderr!.setEncoding('utf8').on('data', (t: string) => {
      err += t
    })
    host.stdout!.setEncoding('utf8').on('data', (t: string) => {
      out += t
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')))
    })
    host.once('exit', (code, signal) => reject(new Error(`the host ended (${code ?? signal}) first: ${err}`)))
  })
}

/** The session id (field 6 of /proc/PID/stat) of `pid`. */
function sessionOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3])
}

/** The entries of `dir` that name `pid` as their host (`<pid>-…` or `cordon-spill-<pid>-…`). */
function ofHost(dir: string, pid: number): string[] {
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : []
  return names
    .filter((n) => n.startsWith(`${pid}-`) || n.startsWith(`cordon-spill-${pid}-`))
    .map((n) => path.join(dir, n))
}

/** The mount points of this mount namespace below `dir`. */
function mountsBelow(dir: string): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point.startsWith(`${dir}/`))
}

describe('the host SIGKILLed with confined trees running', () => {
  it('nothing they started survives, and the next start sweeps the dead host’s dirs', async (ctx) => {
    for (const backend of TEST_BACKENDS) await needBackend(ctx, backend)
    const pty = await ptyStatus()
    if (!pty.usable && pty.required) throw new Error(`node-pty is required here but does not load: ${pty.reason}`)
    if (!pty.usable) ctx.skip(`node-pty does not load here: ${pty.reason}`)
    const root = scratchDir('cordon-faults-killed')
    const privateDir = scratchDir('cordon-faults-killed-private')
    privateDirs.push(privateDir)
    fs.chmodSync(privateDir, 0o700)
    const args = { root, backends: TEST_BACKENDS, mark: crypto.randomBytes(6).toString('hex') }

    const host = startHost('kill', privateDir, args)
    const exited = new Promise((r) => host.once('exit', r))
    const report = JSON.parse(await firstLine(host)) as { labels: Record<string, number[]> }
    labels.push(...Object.keys(report.labels))
    expect(Object.keys(report.labels).length).toBe(4 * TEST_BACKENDS.length)
    // Control: each tree runs, its daemon in a session of its own.
    for (const [label, pids] of Object.entries(report.labels)) {
      expect(pids.every(alive), label).toBe(true)
      expect(new Set(pids.map(sessionOf)).size, `${label}: a setsid daemon`).toBeGreaterThanOrEqual(2)
    }
    const tree = [...new Set([...descendantsOf(host.pid!), ...Object.values(report.labels).flat()])]
    const sessions = path.join(privateDir, 'sessions')
    const spill = path.join(privateDir, 'spill')
    const left = [...ofHost(sessions, host.pid!), ...ofHost(spill, host.pid!)]
    expect(ofHost(spill, host.pid!).length, 'the unconfined run spilled').toBe(1)
    expect(ofHost(sessions, host.pid!).length, 'a session per sandbox and policy').toBeGreaterThanOrEqual(2)
    // A root host bounds every session's temp: a tmpfs on an unbindable bind of its m/ (two mounts).
    const mounts = tempMountRefusal() === undefined ? 2 * ofHost(sessions, host.pid!).length : 0
    expect(mountsBelow(sessions).length, 'the bounded TMPDIRs are mounted').toBe(mounts)

    host.kill('SIGKILL')
    await exited
    const survivors = () => [...tree.filter(alive), ...labels.flatMap((l) => processesMarked(l))]
    expect(await eventually(() => survivors().length === 0, 10_000), `survivors: ${survivors().join(' ')}`).toBe(true)
    // Control: a killed host removes nothing; a live host's dirs look the same.
    expect(left.filter((d) => !fs.existsSync(d))).toEqual([])
    expect(mountsBelow(sessions).length).toBe(mounts)
    const live = [
      path.join(sessions, `${process.pid}-live-abcdef`),
      path.join(spill, `cordon-spill-${process.pid}-abcdef`),
    ]
    for (const dir of live) fs.mkdirSync(dir, { mode: 0o700 })

    const next = startHost('next', privateDir, args)
    let err = ''
    next.stderr!.setEncoding('utf8').on('data', (t: string) => {
      err += t
    })
    expect(await new Promise((r) => next.once('exit', r)), err).toBe(0)
    expect(
      left.filter((d) => fs.existsSync(d)),
      'the dead host’s dirs are swept',
    ).toEqual([])
    expect(mountsBelow(sessions), 'its tmpfs TMPDIRs unmounted').toEqual([])
    expect(
      live.filter((d) => fs.existsSync(d)),
      'a live host’s dirs stay',
    ).toEqual(live)
  }, 180_000)
})
