/**
 * The Seatbelt backend's plan, as a pure function: a policy's grants in, the SBPL profile that
 * `sandbox-exec -p` applies out. Nothing here touches the file system after module load (the
 * templates in `profiles/seatbelt/` are read once); unit tests pin every profile as a golden.
 *
 * INVARIANT — the rendered profile is, in this order:
 *
 *   (version 1)
 *   (deny default)                           1. everything not allowed below is refused (EPERM)
 *   base: processes                          2. fork and exec; signals and process-info only
 *                                               for processes of the same sandbox
 *   base: reads                              3. file-read*, exec and mapping everywhere except
 *                                               /dev and the hidden paths (require-not)
 *   base: devices                            4. /dev by name only: the grant table's devices,
 *                                               /dev/fd, the command's own tty, ptys it opens
 *   base: sysctl-read, preference reads
 *   base: ipc, mach-lookup, network          5. POSIX semaphores only if asked; the mach
 *                                               allow-list (network services only under
 *                                               `inherit`); `network*` only under `inherit`
 *   writes                                   6. workspace-write: the roots; both modes: the
 *                                               session temp dir. Each write rule excludes the
 *                                               protected and hidden paths (require-not), so they
 *                                               fall to (deny default) whatever the rule order
 *   guards                                   7. last, because the last matching rule decides:
 *                                               no file-write-unlink (remove, or rename away) of
 *                                               a writable dir itself or of an ancestor of a
 *                                               protected or hidden path inside one
 *
 * Never allowed: file-link (Seatbelt is not known to check a hard link's source, and a link
 * from outside into a root would make the outside file writable), file-clone, file-ioctl outside
 * the named devices, sysctl-write, mach-register, process-exec without the sandbox.
 *
 * Every path is spelled as the macOS kernel resolves it (`/tmp` → `/private/tmp`, see
 * `literal.ts`) and written with `sbplString`, which no character can break out of.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { InvalidRequestError, formatZodIssues } from '../../policy/errors.js'
import { PACKAGE_ROOT } from '../../policy/package-root.js'
import { vocabularySchemas } from '../../policy/schema/vocabulary.js'
import { onDemand, zod } from '../../policy/schema/zod-on-demand.js'
import type { SandboxGrants } from '../../policy/grants.js'
import {
  cutsNetwork,
  isNormalAbsolutePath,
  type ConfinedSandboxMode,
  type NetworkPolicy,
} from '../../policy/vocabulary.js'
import { darwinCanonicalPath, sbplString, sbplStringProblem } from './literal.js'
import { DEFAULT_MACH_SERVICES, isNetworkService, MACH_SERVICE_NAME } from './mach-services.js'

/** Where the SBPL templates live (a file URL with a trailing slash, derived from the package root). */
export const SEATBELT_TEMPLATE_DIR = pathToFileURL(`${path.join(PACKAGE_ROOT, 'profiles/seatbelt')}/`)

/** The placeholders a template may hold, one per line as `;@name`. */
export const SEATBELT_PLACEHOLDERS = [
  'base',
  'read',
  'devices',
  'ipc',
  'mach',
  'network',
  'writable-roots',
  'temp-dir',
  'guards',
] as const

type Placeholder = (typeof SEATBELT_PLACEHOLDERS)[number]

const PLACEHOLDER_LINE = /^;@([a-z-]+)$/
// Template notes (`;;`) are dropped when rendering; `;` comments are kept in the profile.

// Which placeholders each mode's template (base included) must hold, exactly once each.
const REQUIRED: Record<ConfinedSandboxMode, readonly Placeholder[]> = {
  'read-only': ['read', 'devices', 'ipc', 'mach', 'network', 'temp-dir', 'guards'],
  'workspace-write': ['read', 'devices', 'ipc', 'mach', 'network', 'writable-roots', 'temp-dir', 'guards'],
}

function readTemplate(name: string): string {
  return fs.readFileSync(new URL(name, SEATBELT_TEMPLATE_DIR), 'utf8')
}

/** A mode's template with `;@base` expanded, checked: version line first, each required placeholder once. */
function loadTemplate(mode: ConfinedSandboxMode, base: string): readonly string[] {
  const file = `${mode}.sb`
  const lines = readTemplate(file)
    .replace(/\n$/, '')
    .split('\n')
    .flatMap((line) => (line.trim() === ';@base' ? base.replace(/\n$/, '').split('\n') : [line]))
    .filter((line) => !line.trimStart().startsWith(';;')) // template notes are not part of a profile
  const problems: string[] = []
  if (lines[0] !== '(version 1)') problems.push(`${file}: the first line must be (version 1)`)
  const seen = lines.flatMap((line) => {
    const m = PLACEHOLDER_LINE.exec(line.trim())
    return m ? [m[1]!] : []
  })
  for (const name of seen) {
    if (!(REQUIRED[mode] as readonly string[]).includes(name))
      problems.push(`${file}: unexpected placeholder ;@${name}`)
  }
  for (const name of REQUIRED[mode]) {
    const count = seen.filter((s) => s === name).length
    if (count !== 1) problems.push(`${file}: placeholder ;@${name} must appear once (found ${count})`)
  }
  if (problems.length > 0) throw new Error(`malformed Seatbelt template: ${problems.join('; ')}`)
  return Object.freeze(lines)
}

const BASE = readTemplate('base.sb')

/** The checked templates, read once at module load. */
export const SEATBELT_TEMPLATES: Readonly<Record<ConfinedSandboxMode, readonly string[]>> = Object.freeze({
  'read-only': loadTemplate('read-only', BASE),
  'workspace-write': loadTemplate('workspace-write', BASE),
})

/** Validates SeatbeltProfileOptions (built on first use). */
export const seatbeltProfileOptionsSchema = onDemand(() => {
  const { z } = zod()
  const pathField = z
    .string()
    .refine(isNormalAbsolutePath, 'must be a normalized absolute path (no ".", "..", "//" or trailing "/")')
    .refine((p) => sbplStringProblem(p) === undefined, 'must be well-formed Unicode (no lone surrogate)')
  return z
    .object({
      tempDir: pathField.optional(),
      tty: z
        .string()
        .regex(/^\/dev\/tty[A-Za-z0-9._-]+$/, 'must be a terminal device under /dev (e.g. /dev/ttys003)')
        .optional(),
      network: vocabularySchemas().NetworkPolicySchema.optional(),
      protectedPaths: z.array(pathField).optional(),
      hiddenPaths: z.array(pathField).optional(),
      machServices: z.array(z.string().regex(MACH_SERVICE_NAME, 'must be a mach service name')).optional(),
      posixSemaphores: z.boolean().optional(),
    })
    .strict()
})

/** What the profile needs besides the grants. */
export interface SeatbeltProfileOptions {
  /**
   * The session's private temp dir, writable in both modes. Under `workspace-write` it must be
   * the grants' own `tempDir` (default: that one); under `read-only` `grantsFor` grants none, so
   * it is taken from here (read-only may write its private scratch dir too).
   */
  tempDir?: string | undefined
  /** The command's own terminal (`/dev/ttysNNN`): readable, writable, ioctl. Other terminals stay closed. */
  tty?: string | undefined
  /** Network policy; the stricter of this and the grants' wins (`deny` over `inherit`). */
  network?: NetworkPolicy | undefined
  /** Read-only paths beyond the grants' (e.g. defaults the grants do not carry yet). */
  protectedPaths?: readonly string[] | undefined
  /** Unreadable paths beyond the grants'. */
  hiddenPaths?: readonly string[] | undefined
  /** The mach services a command may look up; replaces the default list (`profiles/seatbelt/mach-services.json`). */
  machServices?: readonly string[] | undefined
  /** Allow POSIX semaphores (Python multiprocessing needs them); they live in a host-wide namespace. Default false. */
  posixSemaphores?: boolean | undefined
}

/** A rendered profile and the facts it was rendered from (every path spelled as macOS resolves it). */
export interface SeatbeltProfile {
  mode: ConfinedSandboxMode
  /** The SBPL text for `sandbox-exec -p`. */
  profile: string
  network: NetworkPolicy
  /** Writable dirs: roots in grant order, then the temp dir. */
  writable: string[]
  tempDir?: string
  tty?: string
  protectedPaths: string[]
  hiddenPaths: string[]
  /** Dirs that may not be removed or renamed (writable dirs and ancestors of protected or hidden paths inside them). */
  guarded: string[]
  /** The mach services a command may look up. */
  machServices: string[]
  /** Services of the requested list left out because they carry network traffic under `deny`. */
  droppedMachServices: string[]
  posixSemaphores: boolean
}

/** The Seatbelt profile that confines a command to `grants`, in the invariant's order. */
export function renderSeatbeltProfile(grants: SandboxGrants, options: SeatbeltProfileOptions = {}): SeatbeltProfile {
  const parsed = seatbeltProfileOptionsSchema().safeParse(options)
  const issues = parsed.success ? [] : formatZodIssues(parsed.error)
  if (!grants.confined || grants.mode === 'danger-full-access') {
    issues.push('mode: danger-full-access is never confined')
  }
  for (const [field, p] of grantPaths(grants)) {
    const problem = sbplStringProblem(p)
    if (problem !== undefined) issues.push(`${field}: ${problem}`)
  }
  const tempDir = parsed.success ? chooseTempDir(grants, options.tempDir, issues) : undefined
  if (issues.length > 0) throw new InvalidRequestError(issues, { context: 'invalid Seatbelt profile request' })
  const mode = grants.mode as ConfinedSandboxMode

  const network: NetworkPolicy = cutsNetwork(grants.network) || cutsNetwork(options.network) ? 'deny' : 'inherit'
  const roots = unique(grants.writable.filter((w) => w.kind !== 'temp').map((w) => darwinCanonicalPath(w.path)))
  const protectedPaths = unique([...grants.protectedPaths, ...(options.protectedPaths ?? [])].map(darwinCanonicalPath))
  const hiddenPaths = unique([...grants.hiddenPaths, ...(options.hiddenPaths ?? [])].map(darwinCanonicalPath))
  const writable = unique([...roots, ...(tempDir === undefined ? [] : [tempDir])])
  const requested = [...(options.machServices ?? DEFAULT_MACH_SERVICES.map((s) => s.name))]
  const machServices = unique(requested.filter((name) => network === 'inherit' || !isNetworkService(name)))
  const droppedMachServices = unique(requested.filter((name) => !machServices.includes(name)))
  const guarded = guardedDirs(writable, [...protectedPaths, ...hiddenPaths])
  const posixSemaphores = options.posixSemaphores ?? false
  const denied = [...protectedPaths, ...hiddenPaths]

  const blocks: Record<Exclude<Placeholder, 'base'>, string[]> = {
    read: readRules(hiddenPaths),
    devices: deviceRules(grants, options.tty),
    ipc: posixSemaphores
      ? ['(allow ipc-posix-sem) ; asked for: POSIX semaphores (a host-wide namespace)']
      : ['; (none allowed)'],
    mach:
      machServices.length === 0
        ? ['; (none allowed)']
        : closed(['(allow mach-lookup', ...machServices.map((name) => `  (global-name ${sbplString(name)})`)]),
    network:
      network === 'inherit'
        ? ['; network: inherit (the host network, unix sockets included)', '(allow network*)', '(allow system-socket)']
        : ['; network: deny (no network operation is allowed, loopback and unix sockets included)'],
    'writable-roots': roots.length === 0 ? ['; (none)'] : writeRule(roots, denied),
    'temp-dir': tempDir === undefined ? ['; (none granted)'] : writeRule([tempDir], denied),
    guards:
      guarded.length === 0
        ? ['; (nothing writable to guard)']
        : closed(['(deny file-write-unlink', ...guarded.map((p) => `  (literal ${sbplString(p)})`)]),
  }

  const lines = SEATBELT_TEMPLATES[mode].flatMap((line) => {
    const m = PLACEHOLDER_LINE.exec(line.trim())
    return m ? blocks[m[1] as Exclude<Placeholder, 'base'>] : [line]
  })
  return {
    mode,
    profile: `${lines.join('\n')}\n`,
    network,
    writable,
    ...(tempDir === undefined ? {} : { tempDir }),
    ...(options.tty === undefined ? {} : { tty: options.tty }),
    protectedPaths,
    hiddenPaths,
    guarded,
    machServices,
    droppedMachServices,
    posixSemaphores,
  }
}

/** Every path of the grants, with the field it came from. */
function grantPaths(grants: SandboxGrants): Array<[string, string]> {
  return [
    ...grants.writable.map((w, i): [string, string] => [`writable[${i}]`, w.path]),
    ...grants.devices.map((d, i): [string, string] => [`devices[${i}]`, d.path]),
    ...grants.protectedPaths.map((p, i): [string, string] => [`protectedPaths[${i}]`, p]),
    ...grants.hiddenPaths.map((p, i): [string, string] => [`hiddenPaths[${i}]`, p]),
  ]
}

/** The temp dir to grant (canonical), checking it against the grants' own and the host temp dirs. */
function chooseTempDir(grants: SandboxGrants, given: string | undefined, issues: string[]): string | undefined {
  const own = grants.tempDir === undefined ? undefined : darwinCanonicalPath(grants.tempDir)
  if (given === undefined) return own
  const wanted = darwinCanonicalPath(given)
  if (own !== undefined && own !== wanted) {
    issues.push(`tempDir: ${JSON.stringify(given)} is not the grants' temp dir ${JSON.stringify(grants.tempDir)}`)
    return undefined
  }
  // The same rule grantsFor applies to its own temp dir: it may never expose a host temp dir.
  const hostTemps = grants.neverWritable.map(darwinCanonicalPath)
  const exposed = hostTemps.filter((t) => isSameOrInside(t, wanted))
  if (exposed.length > 0 || wanted === '/' || isSameOrInside(wanted, '/dev')) {
    issues.push(`tempDir: ${JSON.stringify(given)} would make a host dir (${[...exposed, '/dev'].join(', ')}) writable`)
    return undefined
  }
  return wanted
}

function readRules(hidden: readonly string[]): string[] {
  return closed(
    [
      '(allow file-read* file-test-existence file-map-executable process-exec',
      '  (require-all',
      '    (require-not (subpath "/dev"))',
      ...hidden.map((p) => `    (require-not (subpath ${sbplString(p)}))`),
    ],
    2,
  )
}

function deviceRules(grants: SandboxGrants, tty: string | undefined): string[] {
  const rules = grants.devices.map((device) => {
    const ops: string[] = []
    if (device.access.includes('read')) ops.push('file-read*')
    if (device.access.includes('write') || device.access.includes('truncate')) ops.push('file-write-data')
    if (device.access.includes('ioctl-dev')) ops.push('file-ioctl')
    return `(allow ${ops.join(' ')} (literal ${sbplString(darwinCanonicalPath(device.path))}))`
  })
  if (tty !== undefined)
    rules.push(`(allow file-read* file-write-data file-ioctl (literal ${sbplString(tty)})) ; own tty`)
  return rules
}

/** `(allow file-write* …)` over `dirs`, excluding every denied path that lies inside one of them or above one. */
function writeRule(dirs: readonly string[], denied: readonly string[]): string[] {
  const relevant = denied.filter((d) => dirs.some((dir) => isSameOrInside(d, dir) || isSameOrInside(dir, d)))
  const subpaths = dirs.map((dir) => `(subpath ${sbplString(dir)})`)
  if (relevant.length === 0) return closed(['(allow file-write*', ...subpaths.map((s) => `  ${s}`)])
  return closed(
    [
      '(allow file-write*',
      '  (require-all',
      ...closed(['    (require-any', ...subpaths.map((s) => `      ${s}`)]),
      ...relevant.map((d) => `    (require-not (subpath ${sbplString(d)}))`),
    ],
    2,
  )
}

/** `lines` with `parens` closing parentheses appended to the last one. */
function closed(lines: readonly string[], parens = 1): string[] {
  return lines.map((line, i) => (i === lines.length - 1 ? `${line}${')'.repeat(parens)}` : line))
}

/**
 * Dirs whose removal or rename would carry a protected or hidden path out from under its rule,
 * or drop a root: each writable dir itself, and each ancestor of a denied path that lies inside one.
 */
function guardedDirs(writable: readonly string[], denied: readonly string[]): string[] {
  const out = [...writable]
  for (const d of denied) {
    for (let dir = path.posix.dirname(d); dir !== '/'; dir = path.posix.dirname(dir)) {
      if (writable.some((w) => isSameOrInside(dir, w))) out.push(dir)
    }
  }
  return unique(out)
}

/** Whether `inner` is `outer` or lies beneath it (both canonical). */
function isSameOrInside(inner: string, outer: string): boolean {
  return inner === outer || outer === '/' || inner.startsWith(`${outer}/`)
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)]
}
