import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { privateSubdir } from '../../../../src/subprocess/private-dirs/layout.js'
import { SpillDirectory, isProcessAlive } from '../../../../src/subprocess/private-dirs/spill-dir.js'

let parent: string

beforeEach(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-spilldir-test-'))
})

afterEach(() => {
  fs.rmSync(parent, { recursive: true, force: true })
})

/** A pid that was alive a moment ago and has since exited (and been reaped). */
function deadPid(): number {
  const result = spawnSync('true')
  expect(result.pid).toBeGreaterThan(0)
  return result.pid!
}

describe('SpillDirectory', () => {
  it('creates a 0700 cordon-spill-<pid>-XXXXXX directory lazily and once', () => {
    const dir = new SpillDirectory({ parent })
    expect(dir.created).toBe(false)
    expect(fs.readdirSync(parent)).toEqual([])
    const p = dir.path()
    expect(dir.path()).toBe(p)
    expect(path.dirname(p)).toBe(parent)
    expect(path.basename(p)).toMatch(new RegExp(`^cordon-spill-${process.pid}-[A-Za-z0-9]{6}$`))
    const st = fs.lstatSync(p)
    expect(st.isDirectory()).toBe(true)
    expect(st.mode & 0o777).toBe(0o700)
    dir.dispose()
  })

  it('dispose removes the directory and its files; keep leaves them', () => {
    const dir = new SpillDirectory({ parent })
    const p = dir.path()
    fs.writeFileSync(path.join(p, 'f.log'), 'x')
    dir.dispose()
    expect(fs.existsSync(p)).toBe(false)
    dir.dispose() // idempotent
    expect(() => dir.path()).toThrow(/disposed/)

    const kept = new SpillDirectory({ parent, keep: true })
    const kp = kept.path()
    kept.dispose()
    expect(fs.existsSync(kp)).toBe(true)
  })

  it('dispose without a created directory does nothing', () => {
    const dir = new SpillDirectory({ parent })
    dir.dispose()
    expect(fs.readdirSync(parent)).toEqual([])
  })

  it("defaults to cordon's private spill dir, never the host temp dir", () => {
    const dir = new SpillDirectory()
    try {
      expect(path.dirname(dir.path())).toBe(privateSubdir('spill'))
      expect(path.dirname(dir.path())).not.toBe(path.resolve(os.tmpdir()))
    } finally {
      dir.dispose()
    }
  })
})

describe('SpillDirectory.sweepStale', () => {
  it("removes a dead host's directory and keeps live and foreign ones", async () => {
    const dead = deadPid()
    expect(isProcessAlive(dead)).toBe(false)
    const live = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      const deadDir = path.join(parent, `cordon-spill-${dead}-abc123`)
      fs.mkdirSync(deadDir, { mode: 0o700 })
      fs.mkdirSync(path.join(deadDir, 'nested'))
      fs.writeFileSync(path.join(deadDir, 'nested', 'cordon-1-1-x-stdout.log'), 'data')
      const liveDir = path.join(parent, `cordon-spill-${live.pid}-def456`)
      fs.mkdirSync(liveDir)
      const own = new SpillDirectory({ parent })
      const ownDir = own.path()
      const unrelated = path.join(parent, `cordon-spill-${dead}-toolongname`)
      fs.mkdirSync(unrelated)
      const notADir = path.join(parent, `cordon-spill-${dead}-file01`)
      fs.writeFileSync(notADir, 'x')

      const removed = SpillDirectory.sweepStale(parent)
      expect(removed).toEqual([deadDir])
      expect(fs.existsSync(deadDir)).toBe(false)
      expect(fs.existsSync(liveDir)).toBe(true)
      expect(fs.existsSync(ownDir)).toBe(true)
      expect(fs.existsSync(unrelated)).toBe(true)
      expect(fs.existsSync(notADir)).toBe(true)
      own.dispose()
    } finally {
      live.kill('SIGKILL')
      await new Promise((resolve) => live.once('exit', resolve))
    }
  })

  it('never follows a symlink, at the top level or inside', () => {
    const dead = deadPid()
    const target = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-spilldir-target-'))
    try {
      fs.writeFileSync(path.join(target, 'precious'), 'keep me')
      const link = path.join(parent, `cordon-spill-${dead}-lnk001`)
      fs.symlinkSync(target, link)
      const deadDir = path.join(parent, `cordon-spill-${dead}-dir001`)
      fs.mkdirSync(deadDir)
      fs.symlinkSync(target, path.join(deadDir, 'inner-link'))

      expect(SpillDirectory.sweepStale(parent)).toEqual([deadDir])
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
      expect(fs.readFileSync(path.join(target, 'precious'), 'utf8')).toBe('keep me')
    } finally {
      fs.rmSync(target, { recursive: true, force: true })
    }
  })

  it('returns nothing for a missing parent', () => {
    expect(SpillDirectory.sweepStale(path.join(parent, 'missing'))).toEqual([])
  })
})

describe('isProcessAlive', () => {
  it('is true for this process and for invalid pids (doubt counts as alive)', () => {
    expect(isProcessAlive(process.pid)).toBe(true)
    expect(isProcessAlive(0)).toBe(true)
    expect(isProcessAlive(-1)).toBe(true)
    expect(isProcessAlive(1)).toBe(true) // EPERM or alive: never swept
  })
})
