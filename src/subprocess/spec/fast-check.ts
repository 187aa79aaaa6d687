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
const CONFINEMENT_KEYS = new Set([
  'backend',
  'mode',
  'steps',
  'namespaces',
  'wrapper',
  'mustNotAppear',
  'mustStay',
  'resident',
  'network',
  'bounds',
])
const BOUNDS_KEYS = new Set(['pids', 'memoryBytes', 'cpuGroup', 'oomScoreAdj'])
const RESIDENT_KEYS = new Set(['key', 'argv', 'wrapperSteps', 'command', 'steps', 'proxyPort'])
const NETWORK_KEYS = new Set(['proxyPort', 'serve'])
const NAMESPACE_KEYS = new Set(['ipc', 'net', 'user', 'keys', 'view'])
const LINK_KEYS = new Set(['path', 'target'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const onlyKeys = (o: Record<string, unknown>, allowed: ReadonlySet<string>) =>
  Object.keys(o).every((k) => allowed.has(k))
const cleanString = (v: unknown): v is string => typeof v === 'string' && !v.includes('\0')
/** Whether every entry of `a` passes `ok`: a hole is an undefined entry (every() would skip it; no schema does). */
const allEntries = (a: readonly unknown[], ok: (v: unknown) => boolean) => {
  for (const v of a) if (!ok(v)) return false
  return true
}
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

function namespaces(ns: unknown): boolean {
  if (ns === undefined) return true
  if (!isObject(ns) || !onlyKeys(ns, NAMESPACE_KEYS)) return false
  const { view, ...flags } = ns
  if (
    view !== undefined &&
    !(Array.isArray(view) && allEntries(view, (p) => typeof p === 'string' && p.startsWith('/')))
  )
    return false
  return Object.values(flags).every((b) => b === undefined || typeof b === 'boolean')
}

function mustNotAppear(m: unknown): boolean {
  return m === undefined || (Array.isArray(m) && allEntries(m, (p) => typeof p === 'string' && p.startsWith('/')))
}

function link(l: unknown): boolean {
  if (!isObject(l) || !onlyKeys(l, LINK_KEYS) || !cleanString(l.path) || !l.path.startsWith('/')) return false
  return cleanString(l.target) && l.target !== ''
}

function mustStay(stay: unknown): boolean {
  if (stay === undefined) return true
  if (!Array.isArray(stay)) return false
  return allEntries(stay, link)
}

function wrapper(w: unknown): boolean {
  if (w === undefined) return true
  if (!isObject(w) || !onlyKeys(w, new Set(['ruleset']))) return false
  return w.ruleset === undefined || isObject(w.ruleset)
}

const port = (p: unknown) => typeof p === 'number' && Number.isInteger(p) && p >= 1 && p <= 65535

function network(n: unknown): boolean {
  if (n === undefined) return true
  return isObject(n) && onlyKeys(n, NETWORK_KEYS) && port(n.proxyPort) && typeof n.serve === 'function'
}

const strings = (a: unknown) => Array.isArray(a) && a.length > 0 && allEntries(a, cleanString)

function resident(r: unknown): boolean {
  if (r === undefined) return true
  if (!isObject(r) || !onlyKeys(r, RESIDENT_KEYS) || typeof r.key !== 'string' || r.key === '') return false
  if (!strings(r.argv) || !isObject(r.steps) || (r.wrapperSteps !== undefined && !isObject(r.wrapperSteps)))
    return false
  if (r.proxyPort !== undefined && !port(r.proxyPort)) return false
  const c = r.command
  return (
    isObject(c) &&
    onlyKeys(c, new Set(['path', 'argv'])) &&
    typeof c.path === 'string' &&
    c.path.startsWith('/') &&
    strings(c.argv)
  )
}

function confinement(v: unknown): boolean {
  if (v === undefined) return true
  if (!isObject(v) || !onlyKeys(v, CONFINEMENT_KEYS)) return false
  if (v.backend !== 'landlock' && v.backend !== 'bubblewrap' && v.backend !== 'seatbelt') return false
  if (v.mode !== 'read-only' && v.mode !== 'workspace-write') return false
  if (v.steps !== undefined && !isObject(v.steps)) return false
  if (!namespaces(v.namespaces) || !mustNotAppear(v.mustNotAppear) || !mustStay(v.mustStay)) return false
  return wrapper(v.wrapper) && resident(v.resident) && network(v.network) && bounds(v.bounds)
}

/** Positive safe integers; an oom_score_adj of 1..1000. */
function bounds(b: unknown): boolean {
  if (b === undefined) return true
  if (!isObject(b) || !onlyKeys(b, BOUNDS_KEYS)) return false
  const count = (n: unknown) => n === undefined || (typeof n === 'number' && Number.isSafeInteger(n) && n > 0)
  const adj = b.oomScoreAdj
  const group = b.cpuGroup === undefined || typeof b.cpuGroup === 'boolean'
  return (
    group && count(b.pids) && count(b.memoryBytes) && (adj === undefined || (count(adj) && (adj as number) <= 1000))
  )
}

/** argv: a non-empty list of strings without NUL, the program not empty. */
const program = (argv: unknown) =>
  Array.isArray(argv) && argv.length > 0 && argv[0] !== '' && allEntries(argv, cleanString)
const absolute = (cwd: unknown) => cleanString(cwd) && cwd.startsWith('/')
const grace = (ms: unknown) => typeof ms === 'number' && ms > 0 && ms <= MAX_TIMER_DELAY_MS
const abortSignal = (signal: unknown) => signal === undefined || signal instanceof AbortSignal
const optional = (v: unknown, type: 'boolean' | 'function') => v === undefined || typeof v === type

/** A plain object: made by a literal, JSON or Object.create(null) (the schema's record takes no Date, Map or class instance). */
function isPlain(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false
  const proto = Object.getPrototypeOf(v) as unknown
  return proto === Object.prototype || proto === null
}

function envOverrides(env: unknown): boolean {
  if (env === undefined) return true
  if (!isPlain(env)) return false
  for (const k in env) if (env[k] !== undefined && typeof env[k] !== 'string') return false
  return true
}

function stdin(v: unknown): boolean {
  return v === 'ignore' || v === 'pipe' || (isObject(v) && onlyKeys(v, new Set(['data'])) && typeof v.data === 'string')
}

function stdio(v: unknown): boolean {
  if (!isObject(v) || !onlyKeys(v, new Set(['stdin', 'stdout', 'stderr']))) return false
  return stdin(v.stdin) && output(v.stdout) && output(v.stderr)
}

/** The fields a spawn spec and a terminal spec share: argv, cwd, graceMs, signal, env. */
function processFields(spec: Record<string, unknown>): boolean {
  return (
    program(spec.argv) &&
    absolute(spec.cwd) &&
    grace(spec.graceMs) &&
    abortSignal(spec.signal) &&
    envOverrides(spec.env)
  )
}

/** True only when `spec` is certainly valid; false means "ask the schema". */
export function certainlyValidSpec(spec: unknown): boolean {
  if (!isObject(spec) || !onlyKeys(spec, SPEC_KEYS)) return false
  if (!processFields(spec) || !stdio(spec.stdio)) return false
  if (spec.environment !== undefined && spec.environment !== 'scrubbed' && spec.environment !== 'minimal') return false
  if (!optional(spec.supervise, 'boolean') || !optional(spec.onOutput, 'function')) return false
  return confinement(spec.confinement)
}

const TERMINAL_KEYS = new Set(['argv', 'cwd', 'env', 'cols', 'rows', 'graceMs', 'signal', 'launcher', 'ruleset'])
const dimension = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65_535

function terminalRuleset(ruleset: unknown): boolean {
  if (ruleset === undefined) return true
  return isObject(ruleset) && typeof ruleset.closed === 'boolean' && typeof ruleset.fresh === 'function'
}

/** True only when the terminal `spec` is certainly valid; false means "ask the schema". */
export function certainlyValidTerminalSpec(spec: unknown): boolean {
  if (!isObject(spec) || !onlyKeys(spec, TERMINAL_KEYS)) return false
  if (!processFields(spec) || !dimension(spec.cols) || !dimension(spec.rows)) return false
  return optional(spec.launcher, 'boolean') && terminalRuleset(spec.ruleset)
}
