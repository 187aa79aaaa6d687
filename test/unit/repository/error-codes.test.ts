// Typed errors a caller can act on: every error class of src/ carries a `code` (its own or its
// parent's), and the tools' error codes are one closed set that the tools really use.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BASH_TOOL_ERROR_CODES, JOB_TOOL_ERROR_CODES, TOOL_ERROR_CODES } from '../../../src/tool/tool-error-codes.js'
import { stripComments } from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')

function srcFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? srcFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** Every class body of `code` that extends something: name, parent, body. */
function classesOf(code: string): Array<{ name: string; parent: string; body: string }> {
  const out: Array<{ name: string; parent: string; body: string }> = []
  for (const m of code.matchAll(/\bclass\s+(\w+)\s+extends\s+([\w.]+)[^{]*\{/g)) {
    let depth = 0
    let end = m.index + m[0].length - 1
    for (; end < code.length; end++) {
      if (code[end] === '{') depth++
      else if (code[end] === '}' && --depth === 0) break
    }
    out.push({ name: m[1]!, parent: m[2]!, body: code.slice(m.index + m[0].length, end) })
  }
  return out
}

/** Error classes without a code: `[name, file]` pairs. */
function errorClassesWithoutCode(sources: Array<{ file: string; code: string }>): string[] {
  const classes = sources.flatMap(({ file, code }) => classesOf(code).map((c) => ({ ...c, file })))
  const byName = new Map(classes.map((c) => [c.name, c]))
  const isError = (name: string, seen = new Set<string>()): boolean => {
    if (name === 'Error' || name === 'TypeError' || name === 'RangeError') return true
    const c = byName.get(name)
    if (c === undefined || seen.has(name)) return false
    seen.add(name)
    return isError(c.parent, seen)
  }
  const hasCode = (name: string): boolean => {
    const c = byName.get(name)
    if (c === undefined) return false
    return /\breadonly\s+code\b/.test(c.body) || hasCode(c.parent)
  }
  return classes.filter((c) => isError(c.parent) && !hasCode(c.name)).map((c) => `${c.name} (${c.file})`)
}

const sources = srcFiles(path.join(repo, 'src')).map((f) => ({
  file: path.relative(repo, f),
  code: stripComments(fs.readFileSync(f, 'utf8')),
}))

describe('error codes', () => {
  it('every error class of src/ carries a code', () => {
    expect(errorClassesWithoutCode(sources)).toEqual([])
    // The scan sees the classes it must (and a subclass inherits its parent's code).
    const names = sources.flatMap((s) => classesOf(s.code).map((c) => c.name))
    for (const n of ['SandboxUnavailableError', 'SpawnError', 'AbortedError', 'CommandAbortedError', 'NativeLoadError'])
      expect(names).toContain(n)
  })

  it('the scan catches an error class without one', () => {
    const bad = [
      { file: 'a.ts', code: "class A extends Error { readonly code = 'A' }" },
      { file: 'b.ts', code: 'class B extends A { x = 1 }\nclass C extends Error { readonly name = "C" }' },
      { file: 'd.ts', code: 'class D extends Map { }' },
    ]
    expect(errorClassesWithoutCode(bad)).toEqual(['C (b.ts)'])
  })

  it("the tools' codes are one closed set, each one used by its tool", () => {
    expect(new Set(TOOL_ERROR_CODES).size).toBe(TOOL_ERROR_CODES.length)
    const read = (f: string) => stripComments(fs.readFileSync(path.join(repo, 'src', 'tool', f), 'utf8'))
    const bash = `${read('bash-tool.ts')}\n${read('model-tool.ts')}`
    for (const code of BASH_TOOL_ERROR_CODES) expect(bash, code).toContain(`'${code}'`)
    const jobs = read('jobs/tools.ts')
    for (const code of JOB_TOOL_ERROR_CODES) expect(jobs, code).toContain(`'${code}'`)
    // Every code literal a tool returns is in the set (tsc holds toolError to it as well).
    const refusals = read('refusals-tool.ts')
    const used = [...`${bash}\n${jobs}\n${refusals}`.matchAll(/toolError\([^;]*?'([A-Z_]+)'\)/gs)].map((m) => m[1]!)
    expect(used.length).toBeGreaterThan(5)
    expect(used.filter((c) => !(TOOL_ERROR_CODES as readonly string[]).includes(c))).toEqual([])
  })
})
