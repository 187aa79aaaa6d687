// The read view: siblings along the way to a closed place are readable, the place and symlinks
// are not, and every listed directory is watched.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FS } from '../../../../src/sandbox/ruleset/landlock.js'
import { readEntries } from '../../../../src/sandbox/view/read-view.js'
import { scratchDir } from '../../../support/scratch.js'

describe('the read view', () => {
  const base = scratchDir('cordon-read-view')
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

  it('grants every sibling along the way to a closed place, not the place, and no symlink', () => {
    const home = path.join(base, 'home')
    for (const d of ['home/.ssh', 'home/src', 'other']) fs.mkdirSync(path.join(base, d), { recursive: true })
    fs.writeFileSync(path.join(base, 'home/.ssh/id_ed25519'), 'secret')
    fs.writeFileSync(path.join(base, 'home/.ssh/known_hosts'), 'hosts')
    fs.writeFileSync(path.join(base, 'home/notes'), 'n')
    fs.symlinkSync(path.join(home, '.ssh'), path.join(home, 'sshlink'))
    const watched: string[] = []
    const { entries } = readEntries([{ name: 'policy', path: path.join(home, '.ssh', 'id_ed25519') }], (d) =>
      watched.push(d),
    )
    const paths = entries.map((e) => e.path)
    expect(entries[0]).toEqual({ path: '/', rights: FS.READ_DIR, origin: 'read' })
    expect(paths).toContain(path.join(home, '.ssh', 'known_hosts'))
    expect(paths).toContain(path.join(home, 'src'))
    expect(paths).toContain(path.join(home, 'notes'))
    expect(paths).toContain(path.join(base, 'other'))
    expect(paths).not.toContain(path.join(home, '.ssh', 'id_ed25519'))
    expect(paths).not.toContain(path.join(home, '.ssh'))
    expect(paths).not.toContain(path.join(home, 'sshlink'))
    expect(paths).not.toContain(home)
    expect(entries.filter((e) => e.path === '/')).toEqual([{ path: '/', rights: FS.READ_DIR, origin: 'read' }])
    expect(watched).toEqual(expect.arrayContaining(['/', home, path.join(home, '.ssh')]))
  })
})
