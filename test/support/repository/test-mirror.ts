// Tests mirror src/: each module has its unit test at the same path under test/unit/, or an entry in
// one list naming the tests that cover it (e2e, escape, workload, or the unit test of the module
// that drives it), each of which imports the module or calls something it exports.
import fs from 'node:fs'
import path from 'node:path'
import { importSpecifiers, stripComments } from './import-graph.js'
import { filesBelow } from './budgets.js'

/** The unit test a module of src/ has at its own path: src/a/b.ts → test/unit/a/b.test.ts. */
export function mirrorOf(module: string): string {
  return `test/unit/${module.slice('src/'.length, -'.ts'.length)}.test.ts`
}

/** The names a module exports that a test can call: functions, classes and const-bound arrows. */
export function callableExports(code: string): string[] {
  const body = stripComments(code)
  const names = [
    ...body.matchAll(/\bexport\s+(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)/g),
    ...body.matchAll(/\bexport\s+(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/g),
    ...body.matchAll(/\bexport\s+const\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?\(/g),
  ].map((m) => m[1]!)
  return [...new Set(names)]
}

/** Whether the test `testFile` (its text `code`) imports `module` or calls one of `exported`. */
export function covers(testFile: string, code: string, module: string, exported: readonly string[]): boolean {
  const target = module.replace(/\.ts$/, '')
  for (const spec of importSpecifiers(code)) {
    if (!spec.startsWith('.')) continue
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(testFile), spec))
    if (resolved.replace(/\.(js|ts)$/, '') === target) return true
  }
  const body = stripComments(code)
  return exported.some((name) => new RegExp(`(?<![\\w$.])(?:new\\s+)?${name.replace(/\$/g, '\\$')}\\s*\\(`).test(body))
}

/** What is wrong with `coveredBy` (module → the tests that cover it) against the repository's modules and tests. */
export function mirrorProblems(repo: string, coveredBy: Readonly<Record<string, readonly string[]>>): string[] {
  const modules = filesBelow(repo, 'src').filter((f) => f.endsWith('.ts'))
  const problems: string[] = []
  for (const module of modules) {
    const hasMirror = fs.existsSync(path.join(repo, mirrorOf(module)))
    const listed = coveredBy[module]
    if (hasMirror && listed) problems.push(`${module}: has ${mirrorOf(module)}; remove its entry from the list`)
    if (!hasMirror && !listed)
      problems.push(`${module}: no ${mirrorOf(module)} and no entry naming the tests that cover it`)
  }
  for (const [module, tests] of Object.entries(coveredBy)) {
    if (!modules.includes(module)) {
      problems.push(`${module}: listed, but there is no such module`)
      continue
    }
    const exported = callableExports(fs.readFileSync(path.join(repo, module), 'utf8'))
    if (tests.length === 0) problems.push(`${module}: listed with no test`)
    for (const test of tests) {
      if (!/^test\/.*\.test\.ts$/.test(test)) {
        problems.push(`${module}: ${test} is not a test file`)
        continue
      }
      const file = path.join(repo, test)
      if (!fs.existsSync(file)) problems.push(`${module}: ${test} does not exist`)
      else if (!covers(test, fs.readFileSync(file, 'utf8'), module, exported))
        problems.push(`${module}: ${test} neither imports it nor calls anything it exports`)
    }
  }
  return problems
}
