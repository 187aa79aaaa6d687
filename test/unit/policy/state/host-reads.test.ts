// The host-reads table holds src/ honest: every module that reads a file (readFileSync, readFile,
// openSync, createReadStream, comments aside) has its row, every row names a module that still
// reads one, and every decision says why the host may trust it.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { HOST_READS } from '../../../../src/policy/state/host-reads.js'
import { stripComments } from '../../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..', '..')
const READ_CALL = /\b(readFileSync|readFile|openSync|createReadStream)\s*\(/

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`
    return e.isDirectory() ? sources(rel) : rel.endsWith('.ts') ? [rel] : []
  })
}

/** The modules of src/ that call a file-reading function. */
function readingModules(): string[] {
  return sources('src').filter((f) => READ_CALL.test(stripComments(fs.readFileSync(path.join(repo, f), 'utf8'))))
}

describe('HOST_READS', () => {
  const listed = HOST_READS.map((r) => r.module)

  it('lists every module of src/ that reads a file', () => {
    expect(readingModules().filter((m) => !listed.includes(m))).toEqual([])
  })

  it('lists only modules that exist and still read one, each once', () => {
    const reading = readingModules()
    expect(listed.filter((m) => !reading.includes(m))).toEqual([])
    expect(new Set(listed).size).toBe(listed.length)
  })

  it('says for every row what is read and why it is trusted (or why nothing rides on it)', () => {
    for (const row of HOST_READS) {
      expect(row.reads.length, row.module).toBeGreaterThan(0)
      expect(row.trust.length, row.module).toBeGreaterThan(20)
    }
    // The probe cache is a decision, and its row says how it is revalidated.
    const cache = HOST_READS.find((r) => r.module === 'src/sandbox/probe/disk-cache.ts')
    expect(cache?.decides).toMatch(/programs/)
    expect(cache?.trust).toMatch(/revalidated/)
  })

  it('the scan sees a read hidden from it only by a comment as no read', () => {
    expect(READ_CALL.test(stripComments('// fs.readFileSync(x)\nconst a = 1'))).toBe(false)
    expect(READ_CALL.test(stripComments('fs.openSync(p, "r")'))).toBe(true)
  })
})
