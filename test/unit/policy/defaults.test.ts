// One home for defaults: policy/defaults.ts holds every default cordon applies, and no other module
// of src/ spells one of them again (a `?? 'inherit'`, a 16, a 600000…).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import * as defaults from '../../../src/policy/defaults.js'
import { executorConfig } from '../../../src/shell/executor-options.js'
import { MAX_JOB_WAIT_MS } from '../../../src/tool/jobs/tools.js'
import { stripComments } from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')

function srcFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? srcFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** A default spelled again: `?? <literal>` for a value defaults.ts owns, or the cap itself. */
const RESPELLED =
  /\?\?\s*(?:'inherit'|'read-only'|(?:16|64|3000|5000|64_?000|120_?000|600_?000)\b)|\b600_?000\b|\b120_?000\b/g

describe('defaults', () => {
  it('no module but policy/defaults.ts spells a default again', () => {
    const found = srcFiles(path.join(repo, 'src'))
      .filter((f) => !f.endsWith(path.join('policy', 'defaults.ts')))
      .flatMap((f) => {
        const code = stripComments(fs.readFileSync(f, 'utf8'))
        return [...code.matchAll(RESPELLED)].map((m) => `${path.relative(repo, f)}: ${m[0]}`)
      })
    expect(found).toEqual([])
  })

  it('the scan catches a respelled default', () => {
    const code = "const n = policy.network ?? 'inherit'\nconst c = options.capacity ?? 16\nconst cap = 600_000"
    expect([...code.matchAll(RESPELLED)].map((m) => m[0])).toEqual(["?? 'inherit'", '?? 16', '600_000'])
  })

  it('the executor, the job tools and networkOf use them', () => {
    expect(executorConfig({ cwd: '/' })).toMatchObject({
      timeoutMs: defaults.DEFAULT_TIMEOUT_MS,
      maxTimeoutMs: defaults.MAX_TIMEOUT_MS,
      maxOutputBytes: defaults.DEFAULT_MAX_OUTPUT_BYTES,
      maxSpillBytes: defaults.DEFAULT_MAX_SPILL_BYTES,
      graceMs: defaults.DEFAULT_GRACE_MS,
      defaultMode: defaults.DEFAULT_SANDBOX_MODE,
    })
    expect(MAX_JOB_WAIT_MS).toBe(defaults.MAX_JOB_WAIT_MS)
    expect(defaults.networkOf({})).toBe('inherit')
    expect(defaults.networkOf({ network: 'deny' })).toBe('deny')
    expect(defaults.DEFAULT_SANDBOX_MODE).toBe('read-only')
  })
})
