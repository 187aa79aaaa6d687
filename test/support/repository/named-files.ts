// Files that prose names: the file names in src/ comments and in the repository's Markdown docs, and
// the dist/ modules the benches import; and whether each leads to a file of the repository.
import fs from 'node:fs'
import path from 'node:path'
import { stripComments } from './import-graph.js'
import { filesBelow } from './budgets.js'

/** A file name in prose: optional folders, a name, and an extension of a file kind this repository holds. */
const FILE_NAME =
  /(?<![\w@:/.$-])((?:\.{1,2}\/)?(?:[\w.-]+\/)*[\w-][\w.-]*\.(?:ts|js|mjs|cjs|cc|h|json|md|sb|bash|py|sh|gyp))(?![\w/])/g

/** A name found in `file`. */
export interface NamedFile {
  file: string
  name: string
}

/** The comments of TypeScript `code`, with a path broken across comment lines joined again. */
export function commentsOf(code: string): string {
  const comments = [...code.matchAll(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g)].map((m) => m[0]).join('\n')
  return comments.replace(/\/\n\s*(?:\*|\/\/)\s*/g, '/')
}

/** Every file name in `text`. */
export function fileNamesIn(text: string): string[] {
  return [...text.matchAll(FILE_NAME)].map((m) => m[1]!)
}

/** The dist/ modules that `code` imports (`../dist/x.js`, `dist/x.js`, bench's `dist('x.js')`). */
export function distImports(code: string): string[] {
  const body = stripComments(code)
  const found = [
    ...[...body.matchAll(/['"`](?:\.\.\/)*(dist\/[\w./-]+\.js)['"`]/g)].map((m) => m[1]!),
    // bench/lib.mjs's dist('a/b.js') helper: a module under dist/.
    ...[...body.matchAll(/\bdist\(\s*['"`]([\w./-]+\.js)['"`]\s*\)/g)].map((m) => `dist/${m[1]}`),
  ]
  return [...new Set(found)]
}

/** Every name in src/ comments, the tracked Markdown docs, and the benches' dist/ imports. */
export function namedFiles(repo: string): NamedFile[] {
  const out: NamedFile[] = []
  for (const file of filesBelow(repo, 'src').filter((f) => f.endsWith('.ts'))) {
    const code = fs.readFileSync(path.join(repo, file), 'utf8')
    for (const name of fileNamesIn(commentsOf(code))) out.push({ file, name })
  }
  const docs = ['README.md', 'ARCHITECTURE.md', ...filesBelow(repo, 'profiles'), ...filesBelow(repo, 'bench')]
  for (const file of docs.filter((f) => f.endsWith('.md') && fs.existsSync(path.join(repo, f)))) {
    for (const name of fileNamesIn(fs.readFileSync(path.join(repo, file), 'utf8'))) out.push({ file, name })
  }
  for (const file of filesBelow(repo, 'bench').filter((f) => /\.(mjs|js|ts)$/.test(f))) {
    for (const name of distImports(fs.readFileSync(path.join(repo, file), 'utf8'))) out.push({ file, name })
  }
  return out
}

/** The places a name may mean: beside the file, from the root, under src/; a dist/ module's source. */
function candidates(file: string, name: string): string[] {
  const plain = [path.posix.join(path.posix.dirname(file), name), path.posix.normalize(name), `src/${name}`]
  const sources = plain.flatMap((p) => {
    const dist = /^dist\/(.*)\.js$/.exec(p)
    if (dist) return [`src/${dist[1]}.ts`]
    return p.endsWith('.js') ? [p, `${p.slice(0, -3)}.ts`] : [p]
  })
  return [...plain, ...sources]
}

/** Whether `name`, found in `file`, leads to exactly one file: by its path, or (a bare name) by a unique base name. */
export function leadsToAFile(repo: string, file: string, name: string, tracked: readonly string[]): boolean {
  if (candidates(file, name).some((c) => fs.existsSync(path.join(repo, c)))) return true
  if (name.includes('/')) return false
  const bases = [name, name.replace(/\.js$/, '.ts')]
  return tracked.filter((t) => bases.includes(path.posix.basename(t))).length === 1
}

/** The prose the guard reads: each src/ file's comments, each Markdown doc, each bench file. */
export function namedSources(repo: string): Array<{ file: string; text: string }> {
  const src = filesBelow(repo, 'src')
    .filter((f) => f.endsWith('.ts'))
    .map((file) => ({ file, text: commentsOf(fs.readFileSync(path.join(repo, file), 'utf8')) }))
  const docs = ['README.md', 'ARCHITECTURE.md', ...filesBelow(repo, 'profiles'), ...filesBelow(repo, 'bench')]
    .filter((f) => /\.(md|mjs|js|ts)$/.test(f) && fs.existsSync(path.join(repo, f)))
    .map((file) => ({ file, text: fs.readFileSync(path.join(repo, file), 'utf8') }))
  return [...src, ...docs]
}
