// The import graph of src/, read from the files themselves (no dependency): which module imports
// which, the floor each lives on, the cycles, and the imports that run up a floor. The floors and
// their order are the house's (ARCHITECTURE.md, "Floors").
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** The floors, lowest first; a module may import only modules of its own directory or of a lower floor. */
export const FLOORS: readonly (readonly string[])[] = [
  ['policy'],
  ['subprocess'],
  ['sandbox'],
  ['shell'],
  ['tool', 'cli'],
  // The harness faces: the adapters, and MCP (which stands on the tools and the CLI's policy flags).
  ['adapters', 'mcp'],
]

/** The floor rank of a module path relative to the repository (`src/sandbox/confinement/plan.ts` → 2); `index` for src/index.ts. */
export function floorOf(file: string): { dir: string; rank: number } | undefined {
  const parts = file.split('/')
  if (parts[0] !== 'src') return undefined
  if (parts.length === 2) return { dir: '', rank: FLOORS.length } // src/index.ts: the public face, above all
  const dir = parts[1]!
  const rank = FLOORS.findIndex((floor) => floor.includes(dir))
  return rank < 0 ? undefined : { dir, rank }
}

/** `text` with comments removed (string and template contents kept, so specifiers survive). */
export function stripComments(text: string): string {
  let out = ''
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    const next = text[i + 1]
    if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end < 0 ? text.length : end + 2
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
    } else {
      out += c
      i++
    }
  }
  return out
}

const STATIC_IMPORT = /(?:^|[;\s}])(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?['"]([^'"\n]+)['"]/g
const DYNAMIC_IMPORT = /\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g

/** Every module specifier `text` imports or re-exports from (static, type-only and dynamic). */
export function importSpecifiers(text: string): string[] {
  const code = stripComments(text)
  const found: string[] = []
  for (const m of code.matchAll(STATIC_IMPORT)) found.push(m[1]!)
  for (const m of code.matchAll(DYNAMIC_IMPORT)) found.push(m[1]!)
  return found
}

/** A module graph: repository-relative path → the repository-relative paths it imports. */
export type ImportGraph = Map<string, string[]>

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return tsFiles(p)
    return p.endsWith('.ts') ? [p] : []
  })
}

/** The graph of every `src/**\/*.ts` under `root`; relative specifiers only (packages and node: are outside the house). */
export function readImportGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const file of tsFiles(join(root, 'src')).sort()) {
    const from = relative(root, file)
    const targets = importSpecifiers(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => relative(root, resolve(dirname(file), s)).replace(/\.js$/, '.ts'))
    graph.set(from, [...new Set(targets)])
  }
  return graph
}

/** Every cycle of the graph, as the modules of each strongly connected component (Tarjan), sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter)
    counter++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!))
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      const selfLoop = (graph.get(v) ?? []).includes(v)
      if (component.length > 1 || selfLoop) cycles.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return cycles
}

/** Every import that leaves the house's order: up a floor, sideways between faces, into src/index.ts, or from an unknown directory. */
export function layeringViolations(graph: ImportGraph): string[] {
  const problems: string[] = []
  for (const [from, targets] of graph) {
    const a = floorOf(from)
    if (a === undefined) {
      problems.push(`${from}: not on any floor (add its directory to FLOORS and ARCHITECTURE.md)`)
      continue
    }
    for (const to of targets) {
      const b = floorOf(to)
      if (b === undefined) problems.push(`${from} → ${to}: the target is not on any floor`)
      else if (a.dir === b.dir) continue
      else if (b.rank > a.rank)
        problems.push(`${from} → ${to}: ${a.dir || 'index'} imports ${b.dir || 'index'}, a floor above it`)
      else if (b.rank === a.rank)
        problems.push(`${from} → ${to}: ${a.dir} and ${b.dir} are faces side by side; neither imports the other`)
    }
  }
  return problems
}

/**
 * The order inside src/sandbox/, lowest first: the mechanisms the backends compose, then the
 * backends; every file directly in src/sandbox/ is the face above both (LocalSandbox, the session,
 * the table of backends, the chain's probe, the choice, the verdicts).
 */
export const SANDBOX_TIERS = {
  mechanism: [
    'closed-classes',
    'confinement',
    'denials',
    'network',
    'probe',
    'refusal-log',
    'remedy',
    'ruleset',
    'seccomp',
    'view',
  ],
  backend: ['landlock', 'bubblewrap', 'seatbelt'],
} as const

const TIER_RANK = { mechanism: 0, backend: 1, face: 2 } as const

/** Where a module of src/sandbox/ stands: its tier and folder (`` for the face); undefined outside src/sandbox/ or in an unknown folder. */
export function sandboxTierOf(file: string): { tier: keyof typeof TIER_RANK; folder: string } | undefined {
  const parts = file.split('/')
  if (parts[0] !== 'src' || parts[1] !== 'sandbox' || parts.length < 3) return undefined
  if (parts.length === 3) return { tier: 'face', folder: '' }
  const folder = parts[2]!
  if ((SANDBOX_TIERS.mechanism as readonly string[]).includes(folder)) return { tier: 'mechanism', folder }
  if ((SANDBOX_TIERS.backend as readonly string[]).includes(folder)) return { tier: 'backend', folder }
  return undefined
}

/**
 * Every import inside src/sandbox/ that leaves its order: a mechanism that imports a backend or
 * the face, a backend that imports the face or another backend, or a module in a folder of no tier.
 */
export function sandboxViolations(graph: ImportGraph): string[] {
  const problems: string[] = []
  for (const [from, targets] of graph) {
    if (!from.startsWith('src/sandbox/')) continue
    const a = sandboxTierOf(from)
    if (a === undefined) {
      problems.push(`${from}: its folder is in no tier of src/sandbox/ (add it to SANDBOX_TIERS)`)
      continue
    }
    for (const to of targets) {
      const b = sandboxTierOf(to)
      if (b === undefined || b.folder === a.folder) continue
      if (TIER_RANK[b.tier] > TIER_RANK[a.tier])
        problems.push(
          `${from} → ${to}: a ${a.tier} imports ${b.tier === 'face' ? 'the face' : `a ${b.tier}`}, above it`,
        )
      else if (a.tier === 'backend' && b.tier === 'backend')
        problems.push(`${from} → ${to}: backends never import each other (${a.folder} imports ${b.folder})`)
    }
  }
  return problems
}
