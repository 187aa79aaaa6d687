// Tests mirror src/: each module has its unit test at the same path under test/unit/, or an entry in
// covered-elsewhere.json naming the tests that cover it, each of which imports the module or calls
// something it exports. The modules with neither when the guard landed are in not-yet-mirrored.json:
// the list only shrinks (a module that gets a mirror or an entry must leave it).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { callableExports, covers, mirrorOf, mirrorProblems } from '../../support/repository/test-mirror.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const read = (name: string) => JSON.parse(fs.readFileSync(path.join(import.meta.dirname, name), 'utf8')) as unknown
const coveredElsewhere = read('covered-elsewhere.json') as Record<string, string[]>
const notYetMirrored = read('not-yet-mirrored.json') as string[]

/** The problem mirrorProblems reports for a module with neither a mirror nor an entry. */
const neither = (module: string) => `${module}: no ${mirrorOf(module)} and no entry naming the tests that cover it`

describe('tests mirror src/', () => {
  it('every module has its mirror or an entry whose tests cover it', () => {
    const waived = new Set(notYetMirrored.map(neither))
    expect(mirrorProblems(repo, coveredElsewhere).filter((p) => !waived.has(p))).toEqual([])
  })

  it('the waiver list never grows: at most the 54 modules it named when the guard landed', () => {
    expect(notYetMirrored.length).toBeLessThanOrEqual(54)
  })

  it('not-yet-mirrored.json names only modules that still have neither', () => {
    const problems = new Set(mirrorProblems(repo, coveredElsewhere))
    expect(notYetMirrored.filter((module) => !problems.has(neither(module)))).toEqual([])
  })
})

describe('the mirror checker', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-test-mirror-'))
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  write('src/a/mirrored.ts', 'export function mirrored(): number {\n  return 1\n}\n')
  write('test/unit/a/mirrored.test.ts', "import { mirrored } from '../../../src/a/mirrored.js'\nmirrored()\n")
  write('src/a/imported.ts', 'export const IMPORTED = 1\n')
  write('src/a/called.ts', 'export async function calledByName(): Promise<void> {}\nexport class Made {}\n')
  write('src/a/orphan.ts', 'export function orphan(): void {}\n')
  write('src/a/named-wrongly.ts', 'export function namedWrongly(): void {}\n')
  write(
    'test/e2e/drives.test.ts',
    "import { IMPORTED } from '../../src/a/imported.js'\n// namedWrongly() is only in a comment\nawait run.calledByName()\nnew Made()\n",
  )
  write('test/e2e/other.test.ts', "import { mirrored } from '../../src/a/mirrored.js'\n")

  it('maps a module to its mirror and reads what a test can call', () => {
    expect(mirrorOf('src/sandbox/landlock/plan.ts')).toBe('test/unit/sandbox/landlock/plan.test.ts')
    expect(
      callableExports(
        '// export function commented() {}\nexport function f() {}\nexport async function g() {}\nexport class C {}\nexport const h = (x: number) => x\nexport const K = 1\nexport interface I {}\n',
      ),
    ).toEqual(['f', 'g', 'C', 'h'])
  })

  it('counts an import of the module, or a call or construction of its exports, not a mention', () => {
    const drives = fs.readFileSync(path.join(root, 'test/e2e/drives.test.ts'), 'utf8')
    expect(covers('test/e2e/drives.test.ts', drives, 'src/a/imported.ts', [])).toBe(true)
    expect(covers('test/e2e/drives.test.ts', drives, 'src/a/called.ts', ['calledByName'])).toBe(false)
    expect(covers('test/e2e/drives.test.ts', drives, 'src/a/called.ts', ['Made'])).toBe(true)
    expect(covers('test/e2e/drives.test.ts', drives, 'src/a/named-wrongly.ts', ['namedWrongly'])).toBe(false)
  })

  it('passes a mirrored module and listed modules whose tests cover them', () => {
    expect(
      mirrorProblems(root, {
        'src/a/imported.ts': ['test/e2e/drives.test.ts'],
        'src/a/called.ts': ['test/e2e/drives.test.ts'],
        'src/a/orphan.ts': ['test/e2e/other.test.ts'],
        'src/a/named-wrongly.ts': ['test/e2e/drives.test.ts'],
      }).filter((p) => !p.startsWith('src/a/orphan.ts') && !p.startsWith('src/a/named-wrongly.ts')),
    ).toEqual([])
  })

  it('catches a module with neither, a listed module with a mirror, a test that does not cover, a missing test', () => {
    expect(
      mirrorProblems(root, {
        'src/a/mirrored.ts': ['test/e2e/other.test.ts'],
        'src/a/imported.ts': ['test/e2e/drives.test.ts', 'test/e2e/gone.test.ts', 'test/support/helper.ts'],
        'src/a/named-wrongly.ts': ['test/e2e/drives.test.ts'],
        'src/a/absent.ts': ['test/e2e/drives.test.ts'],
        'src/a/called.ts': [],
      }),
    ).toEqual([
      'src/a/mirrored.ts: has test/unit/a/mirrored.test.ts; remove its entry from the list',
      neither('src/a/orphan.ts'),
      'src/a/imported.ts: test/e2e/gone.test.ts does not exist',
      'src/a/imported.ts: test/support/helper.ts is not a test file',
      'src/a/named-wrongly.ts: test/e2e/drives.test.ts neither imports it nor calls anything it exports',
      'src/a/absent.ts: listed, but there is no such module',
      'src/a/called.ts: listed with no test',
    ])
  })
})
