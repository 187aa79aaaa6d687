/**
 * The hot path of the spawn boundary: a hand-written check that accepts exactly the specs the zod
 * schema (schema.ts) accepts and answers "not sure" for anything else, so the schema runs
 * only then (and lists every problem). zod costs ~50 us per spawn here; this costs ~2.
 * A property test holds the two to the same answer on valid specs.
 */
import { MAX_TIMER_DELAY_MS } from './limits.js'

const SPEC_KEYS = new Set([
  'argv',
  'cwd',
  'stdio',
  'graceMs',
  'signal',
  'env',
  'environment',
  'confinement',
  'supervise',
  'onOutput',
])
const CONFINEMENT_KEYS = new Set(['backend', 'mode', 'steps', 'namespaces', 'wrapper', 'mustNotAppear', 'mustStay'])
const NAMESPACE_KEYS = new Set(['ipc', 'net', 'user', 'keys'])
const LINK_KEYS = new Set(['path', 'target'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const onlyKeys = (o: Record<string, unknown>, allowed: ReadonlySet<string>) =>
  Object.keys(o).every((k) => allowed.has(k))
const cleanString = (v: unknown): v is string => typeof v === 'string' && !v.includes('\0')
const byteCap = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER

const COLLECT_KEYS: ReadonlySet<string> = new Set(['maxBytes', 'spill'])
const SPILL_KEYS: ReadonlySet<string> = new Set(['maxBytes', 'dir'])

function output(v: unknown): boolean {
  if (v === 'pipe' || v === 'inherit') return true
  if (!isObject(v) || !onlyKeys(v, COLLECT_KEYS) || !byteCap(v.maxBytes)) return false
  if (v.spill === undefined) return true
  if (!isObject(v.spill) || !onlyKeys(v.spill, SPILL_KEYS) || !byteCap(v.spill.maxBytes)) return false
  return v.spill.dir === undefined || (typeof v.spill.dir === 'string' && v.spill.dir.startsWith('/'))
}

function confinement(v: unknown): boolean {
  if (v === undefined) return true
  if (!isObject(v) || !onlyKeys(v, CONFINEMENT_KEYS)) return false
  if (v.backend !== 'landlock' && v.backend !== 'bubblewrap' && v.backend !== 'seatbelt') return false
  if (v.mode !== 'read-only' && v.mode !== 'workspace-write') return false
  if (v.steps !== undefined && !isObject(v.steps)) return false
  const ns = v.namespaces
  if (ns !== undefined) {
    if (!isObject(ns) || !onlyKeys(ns, NAMESPACE_KEYS)) return false
    if (Object.values(ns).some((b) => b !== undefined && typeof b !== 'boolean')) return false
  }
  const m = v.mustNotAppear
  if (m !== undefined && (!Array.isArray(m) || m.some((p) => typeof p !== 'string' || !p.startsWith('/')))) return false
  const stay = v.mustStay
  if (stay !== undefined) {
    if (!Array.isArray(stay)) return false
    for (const l of stay as unknown[]) {
      if (!isObject(l) || !onlyKeys(l, LINK_KEYS) || !cleanString(l.path) || !l.path.startsWith('/')) return false
      if (!cleanString(l.target) || l.target === '') return false
    }
  }
  const w = v.wrapper
  if (w !== undefined) {
    if (!isObject(w) || !onlyKeys(w, new Set(['ruleset']))) return false
    if (w.ruleset !== undefined && !isObject(w.ruleset)) return false
  }
  return true
}

/** True only when `spec` is certainly valid; false means "ask the schema". */
export function certainlyValidSpec(spec: unknown): boolean {
  if (!isObject(spec) || !onlyKeys(spec, SPEC_KEYS)) return false
  const { argv, cwd, stdio, graceMs, env } = spec
  if (!Array.isArray(argv) || argv.length === 0 || argv[0] === '' || !argv.every(cleanString)) return false
  if (!cleanString(cwd) || !cwd.startsWith('/')) return false
  if (!isObject(stdio) || !onlyKeys(stdio, new Set(['stdin', 'stdout', 'stderr']))) return false
  const stdin = stdio.stdin
  const stdinOk =
    stdin === 'ignore' ||
    stdin === 'pipe' ||
    (isObject(stdin) && onlyKeys(stdin, new Set(['data'])) && typeof stdin.data === 'string')
  if (!stdinOk || !output(stdio.stdout) || !output(stdio.stderr)) return false
  if (typeof graceMs !== 'number' || !(graceMs > 0 && graceMs <= MAX_TIMER_DELAY_MS)) return false
  if (spec.signal !== undefined && !(spec.signal instanceof AbortSignal)) return false
  if (env !== undefined) {
    if (!isObject(env)) return false
    for (const k in env) if (env[k] !== undefined && typeof env[k] !== 'string') return false
  }
  if (spec.environment !== undefined && spec.environment !== 'scrubbed' && spec.environment !== 'minimal') return false
  if (spec.supervise !== undefined && typeof spec.supervise !== 'boolean') return false
  if (spec.onOutput !== undefined && typeof spec.onOutput !== 'function') return false
  return confinement(spec.confinement)
}

const TERMINAL_KEYS = new Set(['argv', 'cwd', 'env', 'cols', 'rows', 'graceMs', 'signal', 'launcher', 'ruleset'])
const dimension = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65_535

/** True only when the terminal `spec` is certainly valid; false means "ask the schema". */
export function certainlyValidTerminalSpec(spec: unknown): boolean {
  if (!isObject(spec) || !onlyKeys(spec, TERMINAL_KEYS)) return false
  const { argv, cwd, graceMs, env, ruleset } = spec
  if (!Array.isArray(argv) || argv.length === 0 || argv[0] === '' || !argv.every(cleanString)) return false
  if (!cleanString(cwd) || !cwd.startsWith('/')) return false
  if (!dimension(spec.cols) || !dimension(spec.rows)) return false
  if (typeof graceMs !== 'number' || !(graceMs > 0 && graceMs <= MAX_TIMER_DELAY_MS)) return false
  if (spec.signal !== undefined && !(spec.signal instanceof AbortSignal)) return false
  if (env !== undefined) {
    if (!isObject(env)) return false
    for (const k in env) if (env[k] !== undefined && typeof env[k] !== 'string') return false
  }
  if (spec.launcher !== undefined && typeof spec.launcher !== 'boolean') return false
  if (
    ruleset !== undefined &&
    !(isObject(ruleset) && typeof ruleset.closed === 'boolean' && typeof ruleset.fresh === 'function')
  )
    return false
  return true
}
