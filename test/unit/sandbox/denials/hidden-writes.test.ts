// Refusals at hidden places: a write (the message says so, EROFS, or nothing was there to read) is
// a denial; a read stays the secrets class. The entries that hide a path are the `--show` names a
// remedy needs besides a writable root.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hiddenEntriesFor, refusedWrite } from '../../../../src/sandbox/denials/hidden-writes.js'
import { scratchDir } from '../../../support/scratch.js'

describe('refusedWrite', () => {
  const base = scratchDir('cordon-hidden-writes')
  const there = path.join(base, 'id_ed25519')
  fs.writeFileSync(there, 'key')

  it('a message that writes, EROFS, or a shape that says so', () => {
    expect(refusedWrite(there, `Saving key "${there}" failed: Permission denied`)).toBe(true)
    expect(refusedWrite(there, 'npm error at async writeFile (node:internal/fs/promises)')).toBe(true)
    expect(refusedWrite(there, `cat: ${there}: Read-only file system`)).toBe(true)
    expect(refusedWrite(there, 'anything', true)).toBe(true)
  })

  it('a missing path can only have been created; an existing one with no word of a write was read', () => {
    expect(refusedWrite(path.join(base, 'new'), `bash: ${base}/new: Permission denied`)).toBe(true)
    expect(refusedWrite(there, `cat: ${there}: Permission denied`)).toBe(false)
    expect(refusedWrite(there, `Error: EACCES: permission denied, open '${there}'`)).toBe(false)
  })
})

describe('hiddenEntriesFor', () => {
  const home = process.env.HOME ?? '/root'

  it("names the default entries hiding the paths (keep/only by the child's name), not the caller's own", () => {
    const policy = { hiddenPaths: [path.join(home, 'mine')] }
    expect(hiddenEntriesFor(policy, [path.join(fs.realpathSync(home), '.ssh', 'k')])).toEqual(['ssh-keys'])
    expect(hiddenEntriesFor(policy, [path.join(fs.realpathSync(home), '.ssh', 'known_hosts')])).toEqual([])
    expect(hiddenEntriesFor(policy, [path.join(fs.realpathSync(home), '.npmrc')])).toEqual(['npmrc'])
    expect(hiddenEntriesFor(policy, [path.join(fs.realpathSync(home), 'mine', 'x')])).toEqual([])
    expect(hiddenEntriesFor({ hiddenDefaults: false }, [path.join(fs.realpathSync(home), '.npmrc')])).toEqual([])
  })
})
