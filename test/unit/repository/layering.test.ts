// The house's floors hold: no import cycle in src/, and no import that runs up a floor (policy →
// subprocess → sandbox → shell → tool / cli); inside src/sandbox/ the mechanism folders stand below
// the backend folders, which stand below the face, and no backend imports another. The checker is
// shown to catch each on a small graph.
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  floorOf,
  type ImportGraph,
  importCycles,
  importSpecifiers,
  layeringViolations,
  readImportGraph,
  SANDBOX_TIERS,
  sandboxTierOf,
  sandboxViolations,
} from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const graph = readImportGraph(repo)

describe('src/ imports', () => {
  it('reads every module of src/, with its relative imports', () => {
    expect(graph.size).toBeGreaterThan(50)
    expect(graph.get('src/sandbox/local-sandbox.ts')).toContain('src/sandbox/confinement/plan.ts')
    expect(graph.get('src/index.ts')).toContain('src/shell/executor.ts')
  })

  it('has no import cycle', () => {
    expect(importCycles(graph)).toEqual([])
  })

  it('has no import that runs up a floor or sideways between faces', () => {
    expect(layeringViolations(graph)).toEqual([])
  })

  it('keeps src/sandbox/ in order: mechanisms < backends < the face, no backend importing another', () => {
    expect(sandboxViolations(graph)).toEqual([])
  })

  it('has every folder of src/sandbox/ in a tier, and only the table of backends importing them all', () => {
    const sandbox = [...graph.keys()].filter((f) => f.startsWith('src/sandbox/'))
    expect(sandbox.filter((f) => sandboxTierOf(f) === undefined)).toEqual([])
    const importsAllBackends = sandbox.filter((f) =>
      SANDBOX_TIERS.backend.every((b) => (graph.get(f) ?? []).some((t) => t.startsWith(`src/sandbox/${b}/`))),
    )
    expect(importsAllBackends).toEqual(['src/sandbox/backend.ts'])
  })
})

describe('the checker', () => {
  it('parses static, type-only, re-exporting, multi-line and dynamic imports, and ignores comments', () => {
    const text = [
      "import a from './a.js'",
      "import type { B } from '../b.js'",
      "import {\n  c,\n  type D,\n} from './c.js'",
      "export { e } from './e.js'",
      "export * from './f.js'",
      "import './side-effect.js'",
      "const g = await import('./g.js')",
      "// import h from './h.js'",
      "/* import i from './i.js' */",
      "import fs from 'node:fs'",
    ].join('\n')
    expect(importSpecifiers(text)).toEqual([
      './a.js',
      '../b.js',
      './c.js',
      './e.js',
      './f.js',
      './side-effect.js',
      'node:fs',
      './g.js',
    ])
  })

  it('finds a cycle, including one through a type-only import', () => {
    const g: ImportGraph = new Map([
      ['src/shell/a.ts', ['src/shell/b.ts']],
      ['src/shell/b.ts', ['src/shell/a.ts', 'src/policy/c.ts']],
      ['src/policy/c.ts', []],
    ])
    expect(importCycles(g)).toEqual([['src/shell/a.ts', 'src/shell/b.ts']])
  })

  it('reports an upward import, a sideways one between faces, and a module on no floor', () => {
    const g: ImportGraph = new Map([
      ['src/policy/a.ts', ['src/sandbox/b.ts']],
      ['src/sandbox/b.ts', ['src/subprocess/c.ts', 'src/policy/a.ts']],
      ['src/subprocess/c.ts', []],
      ['src/tool/d.ts', ['src/cli/e.ts']],
      ['src/cli/e.ts', ['src/shell/f.ts']],
      ['src/shell/f.ts', []],
      ['src/misc/g.ts', []],
    ])
    expect(layeringViolations(g)).toEqual([
      'src/policy/a.ts → src/sandbox/b.ts: policy imports sandbox, a floor above it',
      'src/tool/d.ts → src/cli/e.ts: tool and cli are faces side by side; neither imports the other',
      'src/misc/g.ts: not on any floor (add its directory to FLOORS and ARCHITECTURE.md)',
    ])
  })

  it('reports, inside src/sandbox/, a backend importing another, a mechanism importing a backend or the face, and an unknown folder', () => {
    const g: ImportGraph = new Map([
      ['src/sandbox/ruleset/a.ts', ['src/sandbox/view/b.ts']],
      ['src/sandbox/view/b.ts', []],
      ['src/sandbox/view/c.ts', ['src/sandbox/landlock/d.ts', 'src/sandbox/face.ts']],
      ['src/sandbox/landlock/d.ts', ['src/sandbox/ruleset/a.ts', 'src/sandbox/landlock/e.ts', 'src/subprocess/x.ts']],
      ['src/sandbox/landlock/e.ts', []],
      ['src/sandbox/bubblewrap/f.ts', ['src/sandbox/landlock/d.ts', 'src/sandbox/face.ts']],
      ['src/sandbox/face.ts', ['src/sandbox/bubblewrap/f.ts', 'src/sandbox/view/b.ts']],
      ['src/sandbox/misc/g.ts', []],
    ])
    expect(sandboxViolations(g)).toEqual([
      'src/sandbox/view/c.ts → src/sandbox/landlock/d.ts: a mechanism imports a backend, above it',
      'src/sandbox/view/c.ts → src/sandbox/face.ts: a mechanism imports the face, above it',
      'src/sandbox/bubblewrap/f.ts → src/sandbox/landlock/d.ts: backends never import each other (bubblewrap imports landlock)',
      'src/sandbox/bubblewrap/f.ts → src/sandbox/face.ts: a backend imports the face, above it',
      'src/sandbox/misc/g.ts: its folder is in no tier of src/sandbox/ (add it to SANDBOX_TIERS)',
    ])
  })

  it('ranks the floors in the house order', () => {
    const rank = (f: string) => floorOf(f)?.rank
    expect(rank('src/policy/x.ts')).toBeLessThan(rank('src/subprocess/x.ts')!)
    expect(rank('src/subprocess/x.ts')).toBeLessThan(rank('src/sandbox/x.ts')!)
    expect(rank('src/sandbox/x.ts')).toBeLessThan(rank('src/shell/x.ts')!)
    expect(rank('src/shell/x.ts')).toBeLessThan(rank('src/tool/x.ts')!)
    expect(rank('src/tool/x.ts')).toBe(rank('src/cli/x.ts'))
    expect(rank('src/index.ts')).toBeGreaterThan(rank('src/cli/x.ts')!)
  })
})
