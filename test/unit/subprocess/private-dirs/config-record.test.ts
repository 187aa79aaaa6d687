// The digest records on disk: one 0600 file per root in <private parent>/config-records, written
// whole, read back; a record that is a symlink, open to others or not JSON is refused (nothing a
// run could plant is believed); roots whose names collide each keep their own record.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DiskConfigRecords, rootHash } from '../../../../src/subprocess/private-dirs/config-record.js'
import { isConfigInvalidError } from '../../../../src/policy/errors.js'
import { scratchDir } from '../../../support/scratch.js'

function store() {
  const parent = path.join(scratchDir('cordon-records'), 'private')
  const env = { CORDON_PRIVATE_DIR: parent }
  return { records: new DiskConfigRecords(env), dir: path.join(parent, 'config-records') }
}

describe('DiskConfigRecords', () => {
  it('writes a 0600 record per root in a 0700 dir and reads it back; none before', () => {
    const { records, dir } = store()
    expect(records.read('/w')).toBeUndefined()
    const entry = { root: '/w', digest: 'abc', content: { network: 'deny' as const } }
    records.write(entry)
    expect(records.read('/w')).toEqual(entry)
    const file = path.join(dir, `${rootHash('/w')}-0.json`)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    records.write({ root: '/w', digest: null, content: null })
    expect(records.read('/w')).toEqual({ root: '/w', digest: null, content: null })
    expect(fs.readdirSync(dir)).toEqual([path.basename(file)]) // replaced whole, no temp left
  })

  it('refuses a record that is a symlink, open to others, or not one it wrote', () => {
    const { records, dir } = store()
    records.write({ root: '/w', digest: 'a', content: {} })
    const file = path.join(dir, `${rootHash('/w')}-0.json`)
    const refusedWith = (pattern: RegExp) => {
      try {
        records.read('/w')
        expect.unreachable()
      } catch (error) {
        expect(isConfigInvalidError(error)).toBe(true)
        expect((error as { issues: string[] }).issues[0]).toMatch(pattern)
      }
    }
    fs.chmodSync(file, 0o644)
    refusedWith(/not a private regular file/)
    fs.writeFileSync(file, 'nonsense', { mode: 0o600 })
    fs.chmodSync(file, 0o600)
    refusedWith(/not JSON/)
    fs.writeFileSync(file, '{"version": 2}')
    refusedWith(/unknown shape/)
    fs.rmSync(file)
    fs.writeFileSync(
      path.join(dir, 'elsewhere.json'),
      JSON.stringify({ version: 1, root: '/w', digest: 'x', content: {} }),
      {
        mode: 0o600,
      },
    )
    fs.symlinkSync(path.join(dir, 'elsewhere.json'), file)
    refusedWith(/cannot be opened \(ELOOP\)/)
  })

  it('keeps roots whose names collide apart, each naming its root', () => {
    const { records, dir } = store()
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    // Another root's record where /w's name would be first.
    fs.writeFileSync(
      path.join(dir, `${rootHash('/w')}-0.json`),
      JSON.stringify({ version: 1, root: '/other', digest: 'o', content: {} }),
      { mode: 0o600 },
    )
    expect(records.read('/w')).toBeUndefined()
    records.write({ root: '/w', digest: 'w', content: {} })
    expect(records.read('/w')?.digest).toBe('w')
    expect(records.read('/other')).toBeUndefined() // /other's own name is elsewhere
    expect(fs.readdirSync(dir).sort()).toEqual([`${rootHash('/w')}-0.json`, `${rootHash('/w')}-1.json`])
  })

  it('rootHash: 16 hex digits, stable, different for near names', () => {
    expect(rootHash('/w')).toMatch(/^[0-9a-f]{16}$/)
    expect(rootHash('/w')).toBe(rootHash('/w'))
    expect(rootHash('/w1')).not.toBe(rootHash('/w2'))
  })
})
