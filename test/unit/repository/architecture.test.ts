// ARCHITECTURE.md stays true: every file it names exists, and every `file:symbol` it names (the
// "Where is it decided?" table above all) is exported from that TypeScript file or defined in that
// native file. The checker is shown to catch a missing file, symbol and member.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stripComments } from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const doc = fs.readFileSync(path.join(repo, 'ARCHITECTURE.md'), 'utf8')

/** A reference to a file, optionally to a symbol (and member) in it. */
interface Reference {
  file: string
  symbol?: string
  member?: string
}

const REFERENCE = /^([\w./-]+\.(?:ts|cc|h|json|mjs|sh|md))(?::([A-Za-z_$][\w$]*)(?:\.([A-Za-z_$][\w$]*))?)?$/

/** Every backticked `path[:symbol[.member]]` of `markdown`. */
function referencesIn(markdown: string): Reference[] {
  const refs: Reference[] = []
  for (const m of markdown.matchAll(/`([^`\n]+)`/g)) {
    const r = REFERENCE.exec(m[1]!)
    if (!r) continue
    refs.push({ file: r[1]!, ...(r[2] ? { symbol: r[2] } : {}), ...(r[3] ? { member: r[3] } : {}) })
  }
  return refs
}

/** The rows of the "Where is it decided?" table: question → references. */
function decisionTable(markdown: string): Array<{ question: string; refs: Reference[] }> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Where is it decided?'))
  if (section === undefined) return []
  return section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*(question|-)/.test(line))
    .map((line) => {
      const [, question = '', where = ''] = line.split('|').map((c) => c.trim())
      return { question, refs: referencesIn(where) }
    })
}

/** The file a reference names: as written, or under src/ (prose says `sandbox/plan.ts`). */
function locate(file: string, root: string): string | undefined {
  return [path.join(root, file), path.join(root, 'src', file)].find((p) => fs.existsSync(p))
}

/** Whether `name` is exported from TypeScript `code`. */
function exportedFromTs(code: string, name: string): boolean {
  const declared = new RegExp(
    `\\bexport\\s+(?:declare\\s+)?(?:default\\s+)?(?:async\\s+)?(?:abstract\\s+)?(?:function\\*?|class|const|let|var|interface|type|enum)\\s+${name}\\b`,
  )
  const listed = new RegExp(`\\bexport\\s+(?:type\\s+)?\\{[^}]*\\b${name}\\b[^}]*\\}`)
  return declared.test(code) || listed.test(code)
}

/** Whether a class or object in `code` has a member `name` (method, getter or field). */
function hasMember(code: string, name: string): boolean {
  return new RegExp(
    `^\\s+(?:(?:private|protected|public|static|readonly|async|override|get|set)\\s+)*${name}\\s*[(<:=?]`,
    'm',
  ).test(code)
}

/** Whether C++ `code` defines a function `name` (a body follows its parameter list). */
function definedInNative(code: string, name: string): boolean {
  const head = new RegExp(`(?:^|\\n)[A-Za-z_\\[][\\w:<>*&\\[\\], ]*?[\\s*&]${name}\\s*\\(`, 'g')
  for (const m of code.matchAll(head)) {
    let depth = 0
    let i = m.index + m[0].length - 1
    for (; i < code.length; i++) {
      if (code[i] === '(') depth++
      else if (code[i] === ')' && --depth === 0) break
    }
    const after = code.slice(i + 1).replace(/^\s*(?:const|noexcept|override)?\s*/, '')
    if (after.startsWith('{')) return true
  }
  return false
}

/** What is wrong with one reference, or undefined when it holds. */
function problemOf(ref: Reference, root: string): string | undefined {
  const label = `${ref.file}${ref.symbol ? `:${ref.symbol}` : ''}${ref.member ? `.${ref.member}` : ''}`
  const where = locate(ref.file, root)
  if (where === undefined) return `${label}: no such file`
  if (ref.symbol === undefined) return undefined
  const code = stripComments(fs.readFileSync(where, 'utf8'))
  const native = /\.(cc|h)$/.test(ref.file)
  const found = native ? definedInNative(code, ref.symbol) : exportedFromTs(code, ref.symbol)
  if (!found) return `${label}: ${ref.symbol} is not ${native ? 'defined' : 'exported'} there`
  if (ref.member !== undefined && !hasMember(code, ref.member)) return `${label}: no member ${ref.member}`
  return undefined
}

describe('ARCHITECTURE.md', () => {
  const table = decisionTable(doc)

  it('has the question → file:symbol table, every row naming at least one symbol', () => {
    expect(table.length).toBeGreaterThanOrEqual(20)
    for (const row of table)
      expect(
        row.refs.filter((r) => r.symbol),
        row.question,
      ).not.toHaveLength(0)
    const questions = table.map((r) => r.question.toLowerCase()).join('\n')
    for (const topic of ['backend', 'enforcement', 'plan builder', 'denial', 'runner failure', 'defaults', 'remedies'])
      expect(questions).toContain(topic)
  })

  it('every file and symbol it names exists (the table and the prose)', () => {
    const refs = referencesIn(doc)
    expect(refs.length).toBeGreaterThan(table.length)
    expect(refs.map((r) => problemOf(r, repo)).filter((p) => p !== undefined)).toEqual([])
  })

  it('names every floor of src/ and every section the house promises', () => {
    for (const dir of fs.readdirSync(path.join(repo, 'src'), { withFileTypes: true })) {
      if (dir.isDirectory()) expect(doc).toContain(`${dir.name}/`)
    }
    for (const heading of [
      'Floors',
      'One run, top to bottom',
      'Mechanisms',
      'Invariants (what must never happen)',
      'Where is it decided?',
      'Recipes',
    ])
      expect(doc).toContain(`## ${heading}`)
  })

  it('the checker catches a missing file, an unexported symbol, a missing member and an undefined native function', () => {
    const refs = referencesIn(
      '`src/nope.ts:x` `src/sandbox/select.ts:notThere` `src/sandbox/local-sandbox.ts:LocalSandbox.nope` `native/spawn.cc:spawn_context_nope` `native/spawn.cc:spawn_process` `src/sandbox/local-sandbox.ts:LocalSandbox.confine`',
    )
    expect(refs.map((r) => problemOf(r, repo))).toEqual([
      'src/nope.ts:x: no such file',
      'src/sandbox/select.ts:notThere: notThere is not exported there',
      'src/sandbox/local-sandbox.ts:LocalSandbox.nope: no member nope',
      'native/spawn.cc:spawn_context_nope: spawn_context_nope is not defined there',
      undefined,
      undefined,
    ])
    // A declaration without a body is not a definition.
    expect(definedInNative('bool spawn_process(SpawnContext* ctx, const SpawnRequest& req);', 'spawn_process')).toBe(
      false,
    )
  })
})
