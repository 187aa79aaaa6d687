// Programs the host runs: trusted only when the file and every directory above it belong to root
// or the host user and no group or other may write them (a root-owned sticky dir excepted). Real
// files, modes and owners (the suite runs as root; uid 65534 stands in for another user).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  checkTrustedProgram,
  findTrustedProgram,
  identityFacts,
  recordedProgramProblem,
  stillTrusted,
  TRUSTED_SEARCH_PATH,
} from '../../../src/subprocess/trusted-program.js'

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-trusted-')))
fs.chmodSync(base, 0o755)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
const uid = process.getuid!()
const other = uid === 0 ? 65534 : 0

/** A fresh dir under base with an executable `prog` in it. */
function program(label: string, dirMode = 0o755, fileMode = 0o755): string {
  const dir = path.join(base, label)
  fs.mkdirSync(dir)
  const file = path.join(dir, 'prog')
  fs.writeFileSync(file, '#!/bin/sh\n')
  fs.chmodSync(file, fileMode)
  fs.chmodSync(dir, dirMode)
  return file
}

describe('checkTrustedProgram', () => {
  it('trusts the system bwrap and says what it is', () => {
    const trust = checkTrustedProgram('/usr/bin/bwrap')
    expect(trust.ok).toBe(true)
    if (trust.ok) expect(trust.identity).toMatchObject({ path: '/usr/bin/bwrap', uid: 0 })
  })

  it('trusts a program of the host user in a private chain (the control of the refusals below)', () => {
    expect(checkTrustedProgram(program('fine')).ok).toBe(true)
  })

  it('refuses a file writable by its group or by others', () => {
    for (const [label, mode] of [
      ['gw', 0o775],
      ['ow', 0o757],
    ] as const) {
      const trust = checkTrustedProgram(program(label, 0o755, mode))
      expect(trust).toMatchObject({ ok: false, reason: expect.stringMatching(/writable by/) })
    }
  })

  it('refuses a directory above it that others may write, unless root owns it and it is sticky', () => {
    expect(checkTrustedProgram(program('open-dir', 0o777)).ok).toBe(false)
    const sticky = program('sticky-dir', 0o1777)
    if (uid === 0) expect(checkTrustedProgram(sticky).ok).toBe(true)
  })

  it('refuses a file or directory owned by another user', () => {
    const file = program('theirs')
    fs.chownSync(file, other, other)
    expect(checkTrustedProgram(file)).toMatchObject({ ok: false, reason: expect.stringMatching(/owned by uid/) })
    const inTheirs = program('their-dir')
    fs.chownSync(path.dirname(inTheirs), other, other)
    expect(checkTrustedProgram(inTheirs)).toMatchObject({ ok: false, reason: expect.stringMatching(/owned by uid/) })
  })

  it('checks a symlink where it stands and where it leads', () => {
    const open = path.join(base, 'open-links')
    fs.mkdirSync(open)
    fs.chmodSync(open, 0o777)
    fs.symlinkSync('/usr/bin/bwrap', path.join(open, 'bwrap'))
    expect(checkTrustedProgram(path.join(open, 'bwrap')).ok).toBe(false)
    const target = program('open-target', 0o777)
    const safe = path.join(base, 'safe-links')
    fs.mkdirSync(safe)
    fs.symlinkSync(target, path.join(safe, 'prog'))
    expect(checkTrustedProgram(path.join(safe, 'prog')).ok).toBe(false)
  })

  it('a root-owned directory symlink on the way (merged /usr: /bin -> usr/bin) is not "writable by others"', () => {
    const links = path.join(base, 'dir-links')
    fs.mkdirSync(links)
    const target = program('via-dir-link')
    fs.symlinkSync(path.dirname(target), path.join(links, 'bin'))
    expect(checkTrustedProgram(path.join(links, 'bin', path.basename(target)))).toMatchObject({ ok: true })
    if (uid !== 0) return // only root can give a link away
    fs.lchownSync(path.join(links, 'bin'), 12345, 12345)
    expect(checkTrustedProgram(path.join(links, 'bin', path.basename(target)))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/owned by uid 12345/),
    })
  })

  it('refuses relative paths, directories and non-executables', () => {
    expect(checkTrustedProgram('bwrap').ok).toBe(false)
    expect(checkTrustedProgram(base).ok).toBe(false)
    expect(checkTrustedProgram(program('plain', 0o755, 0o644)).ok).toBe(false)
  })
})

describe('findTrustedProgram', () => {
  it('searches only the fixed trusted dirs by default, never PATH', () => {
    expect(TRUSTED_SEARCH_PATH).not.toContain('/usr/local/bin')
    const planted = program('planted')
    fs.renameSync(planted, path.join(path.dirname(planted), 'bwrap'))
    const saved = process.env.PATH
    process.env.PATH = `${path.dirname(planted)}:${saved}`
    try {
      expect(findTrustedProgram('bwrap').identity?.path).toBe('/usr/bin/bwrap')
    } finally {
      process.env.PATH = saved
    }
  })

  it('reports a refused candidate and goes on to the next dir', () => {
    const bad = program('bad-first', 0o777)
    const good = program('good-second')
    const found = findTrustedProgram('prog', [path.dirname(bad), path.dirname(good)])
    expect(found.identity?.path).toBe(good)
    expect(found.refused).toEqual([{ path: bad, reason: expect.stringMatching(/writable by others/) }])
  })
})

describe('stillTrusted', () => {
  it('fails for a file rewritten in place at the same size with its mtime put back (the ctime tells)', async () => {
    const file = program('rewritten')
    const trust = checkTrustedProgram(file)
    if (!trust.ok) throw new Error(trust.reason)
    await new Promise((r) => setTimeout(r, 20)) // a ctime tick apart
    const before = fs.statSync(file)
    const ns = fs.statSync(file, { bigint: true })
    fs.writeFileSync(file, '#!/bin/sh\n'.replace('sh', 'xx')) // same size, other bytes, same inode
    // The exact nanoseconds back (Node's utimes rounds them): what `touch -d` could do.
    const put = `import os; os.utime(${JSON.stringify(file)}, ns=(${ns.atimeNs}, ${ns.mtimeNs}))`
    expect(spawnSync('python3', ['-c', put]).status).toBe(0)
    const after = fs.statSync(file)
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]) // the control
    expect(stillTrusted(trust.identity)).toBe(false)
  })

  it('holds for the same file and fails once it is replaced', () => {
    const file = program('replaced')
    const trust = checkTrustedProgram(file)
    if (!trust.ok) throw new Error(trust.reason)
    expect(stillTrusted(trust.identity)).toBe(true)
    fs.rmSync(file)
    fs.writeFileSync(file, '#!/bin/sh\necho other\n')
    fs.chmodSync(file, 0o755)
    expect(stillTrusted(trust.identity)).toBe(false)
  })
})

describe('recordedProgramProblem', () => {
  it('passes the recorded file, names one replaced since, and one no longer trusted', () => {
    const file = program('recorded')
    const trust = checkTrustedProgram(file)
    if (!trust.ok) throw new Error(trust.reason)
    const recorded = identityFacts(trust.identity)
    expect(recorded).not.toHaveProperty('path')
    expect(recordedProgramProblem(file, recorded)).toBeUndefined()
    fs.rmSync(file)
    fs.writeFileSync(file, '#!/bin/sh\necho replaced\n', { mode: 0o755 })
    expect(recordedProgramProblem(file, recorded)).toMatch(/was replaced since the probe checked it/)
    expect(recordedProgramProblem(file, undefined)).toBeUndefined()
    fs.chmodSync(file, 0o757)
    expect(recordedProgramProblem(file, undefined)).toMatch(/is refused: .*writable by others/)
  })
})
