// The host check behind every refusal: would ordinary permissions have let the command do it?
// Writing needs the file, creating the nearest existing parent, removing the parent and the
// sticky-bit rule; a capability-less user is judged by the mode bits alone.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { notExecutable, permittedUnconfined } from '../../../../src/sandbox/denials/permissions.js'
import { scratchDir } from '../../../support/scratch.js'

describe('permittedUnconfined', () => {
  const base = scratchDir('cordon-permissions')
  const who = { uid: 4242, gids: [4242] }
  const open = path.join(base, 'open')
  const shut = path.join(base, 'shut')
  fs.mkdirSync(open, { mode: 0o777 })
  fs.chmodSync(open, 0o777)
  fs.mkdirSync(shut, { mode: 0o555 })
  fs.chmodSync(shut, 0o555)

  it('creating needs the nearest existing parent: writable for anyone here, not in a 0555 dir', () => {
    expect(permittedUnconfined(path.join(open, 'a', 'b'), 'mkdir', who)).toBe(true)
    expect(permittedUnconfined(path.join(shut, 'a'), 'create', who)).toBe(false)
  })

  it('writing an existing file needs the file; removing it needs the parent', () => {
    const file = path.join(shut, 'f')
    fs.chmodSync(shut, 0o755)
    fs.writeFileSync(file, '', { mode: 0o666 })
    fs.chmodSync(file, 0o666)
    fs.chmodSync(shut, 0o555)
    expect(permittedUnconfined(file, 'open for writing', who)).toBe(true)
    expect(permittedUnconfined(file, "rm: cannot remove 'f'", who)).toBe(false)
  })

  it('a sticky directory lets only the owners remove', () => {
    const sticky = path.join(base, 'sticky')
    fs.mkdirSync(sticky, { mode: 0o1777 })
    fs.chmodSync(sticky, 0o1777)
    fs.writeFileSync(path.join(sticky, 'theirs'), '')
    expect(permittedUnconfined(path.join(sticky, 'theirs'), 'unlink', who)).toBe(false)
    expect(permittedUnconfined(path.join(sticky, 'new'), 'create', who)).toBe(true)
  })

  it("without a user, the host process's own access check", () => {
    expect(permittedUnconfined(path.join(open, 'x'), 'create')).toBe(true)
  })
})

describe('notExecutable', () => {
  it('only a 126 on an existing non-executable file or a directory', () => {
    const base = scratchDir('cordon-not-executable')
    const script = path.join(base, 's.sh')
    fs.writeFileSync(script, 'echo\n', { mode: 0o644 })
    expect(notExecutable(script, 126)).toBe(true)
    expect(notExecutable(base, 126)).toBe(true)
    expect(notExecutable(script, 1)).toBe(false)
    expect(notExecutable(path.join(base, 'missing'), 126)).toBe(false)
    fs.chmodSync(script, 0o755)
    expect(notExecutable(script, 126)).toBe(false)
  })
})
