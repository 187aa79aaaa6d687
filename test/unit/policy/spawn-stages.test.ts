// One list of spawn stages (native/stages.json) generates native/stages.h and
// src/policy/spawn-stages.ts; native code names a stage only through the header, every stage of the
// list is emitted by something, and nothing emits a stage the list lacks.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONFINEMENT_STAGES, SPAWN_STAGES } from '../../../src/policy/spawn-stages.js'
import { stripComments } from '../../support/repository/import-graph.js'
import { stageConstants, stageLiteralProblems, stageUses } from '../../support/repository/native-stages.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const nativeDir = path.join(repo, 'native')
const list = JSON.parse(fs.readFileSync(path.join(nativeDir, 'stages.json'), 'utf8')) as {
  stages: Array<{ name: string; confinement: boolean; what: string }>
}
const header = fs.readFileSync(path.join(nativeDir, 'stages.h'), 'utf8')
const constants = stageConstants(header)
const sources = fs
  .readdirSync(nativeDir)
  .filter((f) => /\.(cc|h)$/.test(f) && f !== 'stages.h')
  .map((f) => ({ file: `native/${f}`, text: fs.readFileSync(path.join(nativeDir, f), 'utf8') }))

function srcFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? srcFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** Stage names TypeScript emits itself: `stage: 'x'` in a SpawnError and `spawnFailure('x', …)`. */
function stagesEmittedByTypeScript(): Set<string> {
  const out = new Set<string>()
  for (const file of srcFiles(path.join(repo, 'src'))) {
    const code = stripComments(fs.readFileSync(file, 'utf8'))
    for (const m of code.matchAll(/\bstage:\s*'([a-z_]+)'/g)) out.add(m[1]!)
    for (const m of code.matchAll(/\bspawnFailure\(\s*'([a-z_]+)'/g)) out.add(m[1]!)
  }
  return out
}

describe('the one list of spawn stages', () => {
  it('the generated header and TypeScript union match native/stages.json (gen-stages --check)', () => {
    const check = spawnSync(process.execPath, [path.join(repo, 'scripts', 'gen-stages.mjs'), '--check'], {
      encoding: 'utf8',
    })
    expect(check.stderr).toBe('')
    expect(check.status).toBe(0)
    expect([...SPAWN_STAGES]).toEqual(list.stages.map((s) => s.name))
    expect([...CONFINEMENT_STAGES]).toEqual(list.stages.filter((s) => s.confinement).map((s) => s.name))
    expect([...constants.values()]).toEqual(list.stages.map((s) => s.name))
  })

  it('the drift check fails on a stale generated file', () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-stages-drift-'))
    try {
      for (const dir of ['native', 'scripts', path.join('src', 'policy')])
        fs.mkdirSync(path.join(copy, dir), { recursive: true })
      fs.copyFileSync(path.join(repo, 'scripts', 'gen-stages.mjs'), path.join(copy, 'scripts', 'gen-stages.mjs'))
      fs.copyFileSync(path.join(nativeDir, 'stages.json'), path.join(copy, 'native', 'stages.json'))
      execFileSync(process.execPath, [path.join(copy, 'scripts', 'gen-stages.mjs')])
      const check = () =>
        spawnSync(process.execPath, [path.join(copy, 'scripts', 'gen-stages.mjs'), '--check'], { encoding: 'utf8' })
      expect(check().status).toBe(0)
      const ts = path.join(copy, 'src', 'policy', 'spawn-stages.ts')
      fs.writeFileSync(ts, fs.readFileSync(ts, 'utf8').replace("  'clone',\n", ''))
      const stale = check()
      expect(stale.status).toBe(1)
      expect(stale.stderr).toContain('spawn-stages.ts is out of date')
    } finally {
      fs.rmSync(copy, { recursive: true, force: true })
    }
  })

  it('native code names stages only through stages.h, and every constant it uses is defined there', () => {
    const undefinedUses = sources.flatMap(({ file, text }) =>
      [...stageUses(text)].filter((c) => !constants.has(c)).map((c) => `${file}: ${c}`),
    )
    expect(undefinedUses).toEqual([])
    expect(sources.flatMap(({ file, text }) => stageLiteralProblems(file, text))).toEqual([])
  })

  it('every stage of the list is emitted by native code or by TypeScript, and TypeScript emits no other', () => {
    const native = new Set(sources.flatMap(({ text }) => [...stageUses(text)].map((c) => constants.get(c)!)))
    const typescript = stagesEmittedByTypeScript()
    const listed = new Set<string>(SPAWN_STAGES)
    expect(SPAWN_STAGES.filter((s) => !native.has(s) && !typescript.has(s))).toEqual([])
    expect([...typescript].filter((s) => !listed.has(s))).toEqual([])
  })

  it('the literal check catches a stage or status line spelled in a native source', () => {
    const bad = [
      'void f(ChildArgs* a) {',
      '  child_fail(a, "fork", errno);',
      '  report_line(&fd, "error host-gone\\n");',
      '  snprintf(line, sizeof line, "error fork %d\\n", errno);',
      '  out->stage = "rlimits";',
      '  // child_fail(a, "in a comment", 0) is fine',
      '  child_fail(a, kStageExec, errno);',
      '}',
    ].join('\n')
    const problems = stageLiteralProblems('native/bad.cc', bad)
    expect(problems).toHaveLength(5)
    expect(problems.join('\n')).toMatch(/"fork"/)
    expect(problems.join('\n')).toMatch(/host-gone/)
    expect(problems.join('\n')).toMatch(/error fork %d/)
    expect(problems.join('\n')).toMatch(/rlimits/)
    expect(stageUses(bad)).toEqual(new Set(['kStageExec']))
  })
})
