// The house's size budgets, measured from the files themselves: lines per src file, files per folder,
// files sharing a name prefix, and Biome's per-function measures (its own numbers, read from its JSON
// report at a limit of 1, so every function is measured the way the lint rule measures it).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** The budgets; the two function limits are also Biome's base options for src/ in biome.json. */
export const BUDGET = {
  linesPerFile: 400,
  filesPerFolder: 12,
  /** At most two files of one folder may share the text before their first `-` or `.`. */
  filesSharingPrefix: 2,
  functionLines: 60,
  cognitiveComplexity: 20,
} as const

/** The allowances of budget-allowances.json: place → its measure when listed. */
export interface Allowances {
  linesPerFile: Record<string, number>
  filesPerFolder: Record<string, number>
  filesSharingPrefix: Record<string, number>
}

/** Every file below `dir` (repository-relative paths), skipping node_modules and dot folders. */
export function filesBelow(repo: string, dir: string): string[] {
  const out: string[] = []
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(repo, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue
      const child = `${rel}/${e.name}`
      if (e.isDirectory()) walk(child)
      else out.push(child)
    }
  }
  walk(dir)
  return out.sort()
}

/** Lines of each src/ TypeScript file. */
export function linesPerFile(repo: string): Map<string, number> {
  return new Map(
    filesBelow(repo, 'src')
      .filter((f) => f.endsWith('.ts'))
      .map((f) => {
        const text = fs.readFileSync(path.join(repo, f), 'utf8')
        return [f, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)]
      }),
  )
}

/** Files directly in each folder of `files` (their parent directories). */
export function folderCounts(files: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const f of files) counts.set(path.posix.dirname(f), (counts.get(path.posix.dirname(f)) ?? 0) + 1)
  return counts
}

/** Files directly in each folder of src/ and test/. */
export function filesPerFolder(repo: string): Map<string, number> {
  return folderCounts([...filesBelow(repo, 'src'), ...filesBelow(repo, 'test')])
}

/** Each `folder/prefix*` that names more than one file of `files`, with how many. */
export function prefixGroups(files: readonly string[]): Map<string, number> {
  const groups = new Map<string, number>()
  for (const f of files) {
    const prefix = path.posix.basename(f).split(/[-.]/)[0]
    const key = `${path.posix.dirname(f)}/${prefix}*`
    groups.set(key, (groups.get(key) ?? 0) + 1)
  }
  for (const [key, count] of groups) if (count < 2) groups.delete(key)
  return groups
}

/** The prefix groups of src/ and test/. */
export function sharedPrefixes(repo: string): Map<string, number> {
  return prefixGroups([...filesBelow(repo, 'src'), ...filesBelow(repo, 'test')])
}

/** Each src/ file's longest function (lines) and most complex one (cognitive complexity), as Biome counts. */
export function functionMeasures(repo: string): {
  functionLines: Map<string, number>
  cognitiveComplexity: Map<string, number>
} {
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-budgets-'))
  try {
    fs.writeFileSync(
      path.join(config, 'biome.json'),
      JSON.stringify({
        linter: {
          rules: {
            preset: 'none',
            complexity: {
              noExcessiveLinesPerFunction: { level: 'info', options: { maxLines: 1 } },
              noExcessiveCognitiveComplexity: { level: 'info', options: { maxAllowedComplexity: 1 } },
            },
          },
        },
      }),
    )
    const report = execFileSync(
      path.join(repo, 'node_modules/.bin/biome'),
      ['lint', `--config-path=${config}`, '--reporter=json', '--max-diagnostics=none', 'src'],
      { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 },
    )
    const functionLines = new Map<string, number>()
    const cognitiveComplexity = new Map<string, number>()
    const diagnostics = (JSON.parse(report) as { diagnostics: BiomeDiagnostic[] }).diagnostics
    for (const d of diagnostics) {
      const lines = /too many lines \((\d+)\)/.exec(d.message)
      const complexity = /complexity of (\d+)/.exec(d.message)
      const [into, n] = lines ? [functionLines, lines[1]] : complexity ? [cognitiveComplexity, complexity[1]] : []
      if (into && n) into.set(d.location.path, Math.max(into.get(d.location.path) ?? 0, Number(n)))
    }
    return { functionLines, cognitiveComplexity }
  } finally {
    fs.rmSync(config, { recursive: true, force: true })
  }
}

interface BiomeDiagnostic {
  message: string
  location: { path: string }
}

interface BiomeRules {
  noExcessiveLinesPerFunction?: { level?: string; options?: { maxLines?: number } }
  noExcessiveCognitiveComplexity?: { level?: string; options?: { maxAllowedComplexity?: number } }
}

/** biome.json's function limits: the base (the `src/**` override) and the per-file overrides above it. */
export function biomeAllowances(config: {
  overrides?: Array<{ includes?: string[]; linter?: { rules?: { complexity?: BiomeRules } } }>
}): {
  base: { functionLines?: number; cognitiveComplexity?: number }
  functionLines: Record<string, number>
  cognitiveComplexity: Record<string, number>
} {
  const base: { functionLines?: number; cognitiveComplexity?: number } = {}
  const functionLines: Record<string, number> = {}
  const cognitiveComplexity: Record<string, number> = {}
  for (const o of config.overrides ?? []) {
    const rules = o.linter?.rules?.complexity
    const lines = rules?.noExcessiveLinesPerFunction?.options?.maxLines
    const complexity = rules?.noExcessiveCognitiveComplexity?.options?.maxAllowedComplexity
    for (const place of o.includes ?? []) {
      if (place === 'src/**') {
        if (lines !== undefined) base.functionLines = lines
        if (complexity !== undefined) base.cognitiveComplexity = complexity
        continue
      }
      if (lines !== undefined) functionLines[place] = lines
      if (complexity !== undefined) cognitiveComplexity[place] = complexity
    }
  }
  return { base, functionLines, cognitiveComplexity }
}

/**
 * What is wrong with `allowed` against `measured` under `budget`: a place over budget and not
 * allowed, over its allowance, under it (lower it), within budget (remove it), gone, or allowed
 * though `landed` (the places over budget when the guard landed) does not name it.
 */
export function allowanceProblems(
  unit: string,
  measured: ReadonlyMap<string, number>,
  budget: number,
  allowed: Readonly<Record<string, number>>,
  landed: readonly string[],
): string[] {
  const problems: string[] = []
  for (const [place, allowance] of Object.entries(allowed)) {
    const size = measured.get(place)
    if (size === undefined)
      problems.push(`${place}: allowed ${allowance} ${unit}, but it is not there (renamed? rename the entry)`)
    else if (size > allowance) problems.push(`${place}: ${size} ${unit}, over its allowance of ${allowance}`)
    else if (size <= budget)
      problems.push(`${place}: ${size} ${unit}, within the budget of ${budget}: remove its allowance`)
    else if (size < allowance)
      problems.push(`${place}: ${size} ${unit}, under its allowance of ${allowance}: lower the allowance to ${size}`)
  }
  for (const place of Object.keys(allowed)) {
    if (!landed.includes(place) && measured.has(place))
      problems.push(
        `${place}: allowed though it was not over budget when the guard landed: bring it within ${budget} ${unit}`,
      )
  }
  for (const [place, size] of measured) {
    if (size > budget && !(place in allowed)) problems.push(`${place}: ${size} ${unit}, over the budget of ${budget}`)
  }
  return problems
}
