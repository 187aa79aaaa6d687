// Names in prose lead somewhere: every file named in a src/ comment or a Markdown doc, and every
// dist/ module a bench imports, is a file of the repository (a bench's dist/ import, the src/ module
// it is built from). A move that leaves a comment, a doc or a bench pointing at the old place fails
// here. The checker is shown to catch a name that leads nowhere.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stripComments } from '../../support/repository/import-graph.js'
import { filesBelow } from '../../support/repository/budgets.js'
import {
  commentsOf,
  distImports,
  fileNamesIn,
  leadsToAFile,
  namedFiles,
  namedSources,
} from '../../support/repository/named-files.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const tracked = ['src', 'test', 'bench', 'native', 'profiles', 'scripts', 'bin'].flatMap((dir) => filesBelow(repo, dir))

/** Names that are not this repository's files, each with why. */
const NOT_OURS = new Map([
  ['ctx.bash', 'the seed’s tool name, not a file'],
  ['asm/unistd.h', 'a kernel header'],
  ['probe-UID.json', 'a pattern: the probe cache file of one user'],
])

describe('named files', () => {
  it('every file a src comment, a doc or a bench names exists', () => {
    const nowhere = namedFiles(repo)
      .filter(({ name }) => !NOT_OURS.has(name))
      .filter(({ file, name }) => !leadsToAFile(repo, file, name, tracked))
      .map(({ file, name }) => `${file}: names ${name}, which leads to no file`)
    expect(nowhere).toEqual([])
  })

  it('finds a name broken across comment lines, a bare name and a bench import', () => {
    const code = '/**\n * See src/subprocess/\n * private-layout.ts and plan.ts.\n */\nconst x = 1 // not a.file\n'
    expect(fileNamesIn(commentsOf(code))).toEqual(['src/subprocess/private-layout.ts', 'plan.ts'])
    expect(
      distImports("import { a } from '../dist/sandbox/plan.js'\n// '../dist/old.js'\nawait dist('subprocess/x.js')\n"),
    ).toEqual(['dist/sandbox/plan.js', 'dist/subprocess/x.js'])
  })

  it('says where a name leads nowhere, and accepts a unique bare name (not an ambiguous one) and a dist/ module by its source', () => {
    expect(leadsToAFile(repo, 'src/sandbox/x.ts', 'src/nowhere/gone.ts', tracked)).toBe(false)
    expect(leadsToAFile(repo, 'bench/x.mjs', 'dist/policy/package-root.js', tracked)).toBe(true)
    expect(leadsToAFile(repo, 'src/cli/x.ts', 'shell-quote.ts', tracked)).toBe(true)
    expect(leadsToAFile(repo, 'src/cli/x.ts', 'types.ts', tracked)).toBe(false)
  })
})

describe('paths outside the repository and from a module’s own depth', () => {
  it('no src comment, doc or bench names a file outside the repository', () => {
    const outside = /\/work\/shared|\.\.\/shared\/|shared\/reference\//
    const found = namedSources(repo).filter(({ text }) => outside.test(text))
    expect(found.map(({ file }) => file)).toEqual([])
  })

  it('only src/policy/package-root.ts finds a package file from its own place (import.meta.url)', () => {
    const sites = filesBelow(repo, 'src')
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => {
        const code = stripComments(fs.readFileSync(path.join(repo, f), 'utf8'))
        return /new URL\(\s*['"]\.\.?\/|dirname\(\s*fileURLToPath\(\s*import\.meta\.url|import\.meta\.dirname/.test(
          code,
        )
      })
    expect(sites).toEqual(['src/policy/package-root.ts'])
  })
})
