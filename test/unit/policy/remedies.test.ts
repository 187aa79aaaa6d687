// One home for remedies: policy/remedies.ts holds every "what a person can do" text, and no other
// module of src/ writes its own "…or choose danger-full-access".
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import * as remedies from '../../../src/policy/remedies.js'
import { stripComments } from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')

function srcFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? srcFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

const REMEDY_TEXT = /(?:choose|switch the consumer to) danger-full-access/g

describe('remedies', () => {
  it('no module but policy/remedies.ts writes a remedy that ends in danger-full-access', () => {
    const found = srcFiles(path.join(repo, 'src'))
      .filter((f) => !f.endsWith(path.join('policy', 'remedies.ts')))
      .flatMap((f) => {
        const code = stripComments(fs.readFileSync(f, 'utf8'))
        return [...code.matchAll(REMEDY_TEXT)].map(() => path.relative(repo, f))
      })
    expect(found).toEqual([])
    expect([...'x, or choose danger-full-access.'.matchAll(REMEDY_TEXT)]).toHaveLength(1)
  })

  it('every remedy is a sentence a person can act on, and no two say the same', () => {
    const texts = Object.entries(remedies).flatMap(([name, value]) => {
      if (typeof value === 'string') return [[name, value] as const]
      if (typeof value === 'function') return [[name, (value as (...a: string[]) => string)('X', 'Y')] as const]
      return []
    })
    expect(texts.length).toBeGreaterThan(15)
    for (const [name, text] of texts) expect(text.length, name).toBeGreaterThan(20)
    const values = texts.map(([, t]) => t)
    expect(new Set(values).size).toBe(values.length)
    expect(remedies.remedyDefeated('Landlock', 'a quirk')).toBe(
      'Do not rely on Landlock on this host (a quirk); use another backend or choose danger-full-access.',
    )
  })
})
