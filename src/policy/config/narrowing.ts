/**
 * The narrowing rules: whether one set of settings (`next`) is no wider than another (`base`), and
 * if not, every field that widens. Modes: read-only < workspace-write < danger-full-access.
 * Writable roots: each of next's lies in one of base's or in the workspace root, compared after
 * symlinks are resolved. Hidden and protected paths: next keeps every one of base's. Network: deny < allow-list < inherit; between two allow-lists, each allowed pattern of
 * next is covered by one of base's, and each deny pattern of base is covered by one of next's
 * (src/policy/network/widen-hosts.ts:coversPattern). Limits: next keeps each of base's, no higher.
 */
import path from 'node:path'
import { displayLine } from '../display-text.js'
import type { ConfigWidening } from '../errors.js'
import { type HostPattern, parseHostPattern } from '../network/host-pattern.js'
import { coversPattern } from '../network/widen-hosts.js'
import { canonicalPath } from '../resolve.js'
import { type NetworkPolicy, SANDBOX_MODES } from '../vocabulary.js'
import { LIMIT_FIELDS } from './schema.js'
import type { ConfigSettings } from './settings.js'

/** `value` as a widening's `was` or `is`: short JSON, escaped. */
function shown(value: unknown): string {
  return displayLine(JSON.stringify(value) ?? 'none', 200)
}

/** `p` absolute: relative ones against `root` (kept relative when there is none). */
export function absoluteIn(root: string | undefined, p: string): string {
  return path.isAbsolute(p) || root === undefined ? p : path.join(root, p)
}

/** Whether `inner` is `outer` or lies beneath it. */
function within(inner: string, outer: string): boolean {
  return inner === outer || outer === '/' || inner.startsWith(`${outer}/`)
}

function modeWidening(base: ConfigSettings, next: ConfigSettings): ConfigWidening[] {
  const rank = (m: string) => (SANDBOX_MODES as readonly string[]).indexOf(m)
  return rank(next.mode) > rank(base.mode) ? [{ field: 'mode', was: shown(base.mode), is: shown(next.mode) }] : []
}

function writableWidening(base: ConfigSettings, next: ConfigSettings, root: string | undefined): ConfigWidening[] {
  const real = (p: string) => canonicalPath(absoluteIn(root, p))
  // A root inside the workspace root adds nothing: workspace-write writes it already, read-only none.
  const allowed = [...base.writableRoots.map(real), ...(root === undefined ? [] : [canonicalPath(root)])]
  const added = next.writableRoots.filter((p) => !allowed.some((a) => within(real(p), a)))
  if (added.length === 0) return []
  return [
    {
      field: 'writableRoots',
      was: shown(base.writableRoots),
      is: `${shown(next.writableRoots)} (${shown(added)} not writable before)`,
    },
  ]
}

function keptPaths(
  field: 'hiddenPaths' | 'protectedPaths',
  base: ConfigSettings,
  next: ConfigSettings,
  root: string | undefined,
): ConfigWidening[] {
  const kept = new Set(next[field].map((p) => absoluteIn(root, p)))
  const dropped = base[field].filter((p) => !kept.has(absoluteIn(root, p)))
  if (dropped.length === 0) return []
  return [{ field, was: shown(base[field]), is: `${shown(next[field])} (${shown(dropped)} dropped)` }]
}

const networkRank = (n: NetworkPolicy) => (n === 'deny' ? 0 : n === 'inherit' ? 2 : 1)

function patterns(list: readonly string[] | undefined): HostPattern[] {
  return (list ?? []).map(parseHostPattern).filter((p): p is HostPattern => !('error' in p))
}

/** The patterns of `narrow` no pattern of `wide` covers (a pattern that does not parse counts as uncovered). */
function uncovered(narrow: readonly string[] | undefined, wide: readonly string[] | undefined): string[] {
  const w = patterns(wide)
  return (narrow ?? []).filter((text) => {
    const p = parseHostPattern(text)
    return 'error' in p || !w.some((c) => coversPattern(c, p))
  })
}

function networkWidening(base: ConfigSettings, next: ConfigSettings): ConfigWidening[] {
  const b = base.network
  const n = next.network
  if (networkRank(n) > networkRank(b)) return [{ field: 'network', was: shown(b), is: shown(n) }]
  if (typeof b !== 'object' || typeof n !== 'object') return []
  const out: ConfigWidening[] = []
  const moreAllowed = uncovered(n.allow, b.allow)
  if (moreAllowed.length > 0)
    out.push({
      field: 'network.allow',
      was: shown(b.allow),
      is: `${shown(n.allow)} (${shown(moreAllowed)} not allowed before)`,
    })
  const lessDenied = uncovered(b.deny, n.deny)
  if (lessDenied.length > 0)
    out.push({
      field: 'network.deny',
      was: shown(b.deny ?? []),
      is: `${shown(n.deny ?? [])} (${shown(lessDenied)} no longer denied)`,
    })
  return out
}

function limitWidenings(base: ConfigSettings, next: ConfigSettings): ConfigWidening[] {
  return LIMIT_FIELDS.flatMap((key) => {
    const was = base.limits[key]
    const is = next.limits[key]
    if (was === undefined || (is !== undefined && is <= was)) return []
    return [{ field: `limits.${key}`, was: shown(was), is: is === undefined ? 'no limit' : shown(is) }]
  })
}

/** Every field in which `next` is wider than `base` (empty: `next` is as narrow or narrower); `root` resolves relative paths. */
export function wideningsOf(base: ConfigSettings, next: ConfigSettings, root: string | undefined): ConfigWidening[] {
  return [
    ...modeWidening(base, next),
    ...writableWidening(base, next, root),
    ...keptPaths('hiddenPaths', base, next, root),
    ...keptPaths('protectedPaths', base, next, root),
    ...networkWidening(base, next),
    ...limitWidenings(base, next),
  ]
}
