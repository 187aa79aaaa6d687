// The load suite's readers (test/load/leak-watch.ts) against deliberate leaks: a descriptor left
// open, a process left running with a run's marker, a zombie left unreaped, a session and a spill
// dir left on disk, a cgroup leaf left behind, memory held. Each is seen, and once undone the
// host reads clean again: the load suite's checks can fail.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cgroupHierarchies } from '../../src/subprocess/cgroup/hierarchy.js'
import { createSessionDirs, privateSubdir } from '../../src/subprocess/private-dirs/layout.js'
import { eventually } from '../support/subprocess/processes.js'
import { scratchDir } from '../support/scratch.js'
import { hostBaseline, leftovers, settledRss, zombies } from './leak-watch.js'

const marker = () => `DSH_LOAD_MARK=${randomBytes(8).toString('hex')}`
const started: ChildProcess[] = []
afterEach(async () => {
  for (const child of started.splice(0)) {
    child.kill('SIGKILL')
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r))
  }
})

/** A child running `script` with `mark` in its environment (stdio ignored: no pipe of ours). */
function startMarked(script: string, mark: string): ChildProcess {
  const [name, value] = mark.split('=') as [string, string]
  const child = spawn('sh', ['-c', script], { stdio: 'ignore', env: { ...process.env, [name]: value } })
  started.push(child)
  return child
}

describe('leak readers', () => {
  it('see a descriptor left open, and read clean once it is closed', () => {
    const mark = marker()
    const base = hostBaseline()
    expect(leftovers(base, mark)).toEqual([])
    const file = path.join(scratchDir('cordon-leak-fd'), 'held')
    fs.writeFileSync(file, '')
    const fd = fs.openSync(file, 'r')
    expect(fd).toBeGreaterThan(2)
    expect(leftovers(base, mark)).toEqual([`fd opened: ${file}`])
    fs.closeSync(fd)
    expect(leftovers(base, mark)).toEqual([])
  })

  it('see a process carrying the marker, and a new process below the host', async () => {
    const mark = marker()
    const base = hostBaseline()
    const child = startMarked('exec sleep 30', mark)
    expect(await eventually(() => leftovers(base, mark).length === 2)).toBe(true)
    expect(leftovers(base, mark)).toEqual([
      `survivor ${child.pid} S sleep 30`,
      `process ${child.pid} S (parent ${process.pid}) sleep 30`,
    ])
    child.kill('SIGKILL')
    expect(await eventually(() => leftovers(base, mark).length === 0)).toBe(true)
  })

  it('see a zombie below the host (a child its parent never reaps)', async () => {
    const mark = marker()
    // `exec sleep` replaces the shell, so its short-lived child is never reaped: a zombie under it.
    const child = startMarked('sleep 0.05 & exec sleep 30', mark)
    expect(await eventually(() => zombies().some((z) => z.ppid === child.pid))).toBe(true)
    expect(leftovers(hostBaseline(), marker())).toEqual([
      expect.stringMatching(new RegExp(`^zombie \\d+ \\(parent ${child.pid}\\) $`)),
    ])
  })

  it("see this host's session and spill dirs, and no other host's", () => {
    const mark = marker()
    const base = hostBaseline()
    const session = createSessionDirs('leak')
    const spill = fs.mkdtempSync(path.join(privateSubdir('spill'), `cordon-spill-${process.pid}-`))
    const other = fs.mkdtempSync(path.join(privateSubdir('spill'), `cordon-spill-${process.pid}0-`))
    try {
      expect(leftovers(base, mark).sort()).toEqual([`private dir ${session.dir}`, `private dir ${spill}`].sort())
    } finally {
      for (const dir of [session.dir, spill, other]) fs.rmSync(dir, { recursive: true, force: true })
    }
    expect(leftovers(base, mark)).toEqual([])
  })

  const own = cgroupHierarchies().dirs.pids
  const leafTitle = 'see a second cgroup leaf of a controller (one is made ahead)'
  it.skipIf(own === undefined)(
    own === undefined ? `${leafTitle} (skipped: no writable cgroup v1 pids hierarchy, or not root)` : leafTitle,
    () => {
      const mark = marker()
      const base = hostBaseline()
      const parent = path.join(own!, `cordon-${process.pid}`)
      fs.mkdirSync(parent, { recursive: true })
      const leaves = ['leak-1', 'leak-2'].map((n) => path.join(parent, n))
      try {
        for (const leaf of leaves) fs.mkdirSync(leaf)
        expect(leftovers(base, mark)).toEqual(leaves.map((l) => `cgroup leaf ${l}`))
      } finally {
        for (const leaf of leaves) fs.rmdirSync(leaf)
      }
      expect(leftovers(base, mark)).toEqual([])
    },
  )

  it('see memory held: the settled RSS grows by what is held, and falls once it is let go', () => {
    const before = settledRss()
    let held: Buffer | undefined = Buffer.alloc(64 * 2 ** 20, 1)
    expect(settledRss() - before).toBeGreaterThan(60 * 2 ** 20)
    expect(held.length).toBeGreaterThan(0)
    held = undefined
    expect(settledRss() - before).toBeLessThan(16 * 2 ** 20)
  })
})
