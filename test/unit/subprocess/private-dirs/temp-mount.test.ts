// The tmpfs a root host lays over a session's TMPDIR and /dev/shm, for real: mounted with its size and owner,
// resized with its contents kept (never below them), detached; a non-root host mounts none.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  detachTemp,
  isMountPoint,
  mountsAt,
  mountTemp,
  resizeTemp,
  tempMountRefusal,
} from '../../../../src/subprocess/private-dirs/temp-mount.js'
import { scratchDir } from '../../../support/scratch.js'

const MIB = 1024 * 1024
const refusal = tempMountRefusal()

describe('session temp mounts', () => {
  it.skipIf(refusal !== undefined)('mounts a bounded tmpfs, resizes it keeping its contents, detaches it', () => {
    const dir = path.join(scratchDir('temp-mount'), 'tmp')
    fs.mkdirSync(dir, { mode: 0o700 })
    try {
      expect(mountTemp(dir, 2 * MIB, { uid: 65534, gid: 65534 })).toBe(true)
      expect(isMountPoint(dir)).toBe(true)
      // The tmpfs on an unbindable bind of the dir: another bwrap's recursive bind skips it.
      expect(mountsAt(dir)).toBe(2)
      const lines = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
      expect(lines.filter((l) => l.split(' ')[4] === dir && / unbindable /.test(l))).toHaveLength(1)
      const st = fs.statSync(dir)
      expect([st.uid, st.gid, st.mode & 0o777]).toEqual([65534, 65534, 0o700])
      const df = () => execFileSync('df', ['-B1', '--output=size', dir], { encoding: 'utf8' }).trim().split('\n')[1]
      expect(Number(df())).toBe(2 * MIB)
      fs.writeFileSync(path.join(dir, 'kept'), Buffer.alloc(MIB + 1))
      expect(() => fs.writeFileSync(path.join(dir, 'more'), Buffer.alloc(MIB))).toThrow(/ENOSPC/)
      expect(resizeTemp(dir, 4 * MIB)).toBe(true)
      expect(Number(df())).toBe(4 * MIB)
      expect(fs.statSync(path.join(dir, 'kept')).size).toBe(MIB + 1)
      // Never below what it holds.
      expect(resizeTemp(dir, 64 * 1024)).toBe(false)
    } finally {
      detachTemp(dir)
    }
    expect(isMountPoint(dir)).toBe(false)
    expect(mountsAt(dir)).toBe(0)
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it.skipIf(refusal === undefined)('a host that cannot mount one says why and mounts none', () => {
    expect(refusal).toBeTruthy()
    const dir = scratchDir('temp-mount')
    expect(mountTemp(dir, MIB)).toBe(false)
    expect(isMountPoint(dir)).toBe(false)
  })
})
