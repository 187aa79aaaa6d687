// Tests that cannot fail are defects: a test that returns early on a backend or host check passes
// silently, a skip without its reason hides why, a backend gate whose answer is dropped runs on
// regardless, and an assert of this host's numbers (Landlock ABI 7) fails on another supported
// kernel. This scans every test file for those shapes, and shows it catches each one.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stripComments } from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')

/** Words that make an `if (…) return` a backend or host gate. */
const GATE = /requireBackend|backendStatus|usable|process\.platform|existsSync|getuid|available|supported|process\.arch/

/** The balanced text of the call whose `(` is at `open`. */
function callArgs(code: string, open: number): string {
  let depth = 0
  for (let i = open; i < code.length; i++) {
    if (code[i] === '(') depth++
    else if (code[i] === ')' && --depth === 0) return code.slice(open + 1, i)
  }
  return code.slice(open + 1)
}

/** The hygiene problems of one test file (`file` is repository-relative). */
function hygieneProblems(file: string, text: string): string[] {
  const code = stripComments(text)
  const problems: string[] = []
  const lineOf = (index: number) => code.slice(0, index).split('\n').length
  for (const m of code.matchAll(/\bif\s*\((.*)\)\s*return\s*(?:;|\n|\}|$)/gm)) {
    if (GATE.test(m[1]!))
      problems.push(`${file}:${lineOf(m.index)}: returns early on a gate (${m[1]}); skip with the reason instead`)
  }
  for (const m of code.matchAll(/\b(?:ctx|context|t)\.skip\(\s*\)/g)) {
    problems.push(`${file}:${lineOf(m.index)}: a skip without its reason`)
  }
  for (const m of code.matchAll(/^\s*await requireBackend\(/gm)) {
    problems.push(`${file}:${lineOf(m.index)}: the backend gate's answer is dropped; use needBackend(ctx, …)`)
  }
  for (const m of code.matchAll(/\bif\s*\(\s*await requireBackend\(/g)) {
    problems.push(`${file}:${lineOf(m.index)}: part of a test runs only when a backend is usable; give it its own test`)
  }
  if (/^test\/(e2e|escape)\//.test(file)) {
    for (const m of code.matchAll(/\.(toMatchObject|toEqual|toStrictEqual|toBe|toContain|toMatch)\(/g)) {
      const args = callArgs(code, m.index + m[0].length - 1)
      if (/\babi:\s*\d|ABI \d/.test(args))
        problems.push(`${file}:${lineOf(m.index)}: asserts this host's Landlock ABI; assert what holds on any kernel`)
    }
  }
  return problems
}

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? testFiles(p) : e.name.endsWith('.test.ts') ? [p] : []
  })
}

describe('test hygiene', () => {
  it('no test returns early instead of skipping, skips without a reason, drops a gate, or asserts host numbers', () => {
    // This file's own fixtures are the bad shapes it looks for.
    const files = testFiles(path.join(repo, 'test')).filter((f) => f !== import.meta.filename)
    expect(files.length).toBeGreaterThan(40)
    const problems = files.flatMap((f) => hygieneProblems(path.relative(repo, f), fs.readFileSync(f, 'utf8')))
    expect(problems).toEqual([])
  })

  it('the scan catches each shape', () => {
    const bad = [
      "it('a', async () => {",
      "  if (!(await requireBackend('bubblewrap'))) return",
      "  if (process.platform !== 'darwin') return;",
      '  if (!cap.usable) return ctx.skip()',
      "  await requireBackend('landlock')",
      "  if (await requireBackend('bubblewrap')) {",
      '  }',
      '  expect(cap).toMatchObject({ usable: false, abi: 7 })',
      '  expect(cap.version).toMatch(/Landlock ABI 7/)',
      '})',
    ].join('\n')
    const problems = hygieneProblems('test/e2e/bad.test.ts', bad)
    expect(problems).toHaveLength(7)
    expect(problems.filter((p) => p.includes('returns early'))).toHaveLength(2)
    expect(problems.filter((p) => p.includes('without its reason'))).toHaveLength(1)
    expect(problems.filter((p) => p.includes('dropped'))).toHaveLength(1)
    expect(problems.filter((p) => p.includes('its own test'))).toHaveLength(1)
    expect(problems.filter((p) => p.includes('Landlock ABI'))).toHaveLength(2)
  })

  it('leaves alone what is not a gate: a type guard after its assert, a value returned, a pure ABI input', () => {
    const fine = [
      "  expect(outcome, 'attack did not run').toBeDefined()",
      '  if (!outcome) return',
      '  if (!spillDir.created) return []',
      "  ctx.skip('backend bubblewrap is unusable here')",
      '  const facts = { abi: 7, seccomp: true }',
    ].join('\n')
    expect(hygieneProblems('test/e2e/fine.test.ts', fine)).toEqual([])
    expect(hygieneProblems('test/unit/pure.test.ts', 'expect(plan).toMatchObject({ abi: 7 })')).toEqual([])
  })
})
