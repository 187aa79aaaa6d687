// The package's own root, found from the module's place: the directory holding cordon's package.json.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../../src/policy/package-root.js'

describe('PACKAGE_ROOT', () => {
  it("is the absolute directory of cordon's package.json, without a trailing slash", () => {
    expect(path.isAbsolute(PACKAGE_ROOT)).toBe(true)
    expect(PACKAGE_ROOT.endsWith('/')).toBe(false)
    const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { name: string }
    expect(manifest.name).toBe('cordon')
  })

  it('is this repository when run from its sources', () => {
    expect(PACKAGE_ROOT).toBe(path.resolve(import.meta.dirname, '..', '..', '..'))
  })
})
