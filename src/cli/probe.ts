/** `cordon probe`: which backends really confine on this host, what each governs, and remedies. */
import { displayLine } from '../policy/display-text.js'
import { LocalSandbox } from '../sandbox/local-sandbox.js'
import type { BackendCapability, SandboxCapabilities } from '../sandbox/probe.js'
import { parseWords } from './invocation/parse.js'
import { UsageError } from './usage-error.js'

/** `cordon probe --help`. */
export const PROBE_HELP = `Usage: cordon probe [--json]

Probes every sandbox backend with a canary that must be denied a write, and prints the spawn
path in use (native addon or portable node:child_process) and why, then per backend: usable or
why not, each program it refused to run (bwrap, cordon-exec: not owned by root or you, or
writable by group or others, the file or a directory above it), version, effect classes governed per mode, limitations, the probe's time, and what to
do about each failure.
`

/** The spawn path line(s): which path runs commands and why, and the helper it supervises with. */
function spawnPathLines(caps: SandboxCapabilities): string[] {
  const s = caps.spawnPath
  if (!s) return []
  if (s.path === 'native') return [`spawn path: native (${s.reason})`]
  return [
    `spawn path: portable, node:child_process (${s.reason})`,
    s.helper
      ? `  supervised runs: cordon-exec init (${s.helper})`
      : '  supervised runs: no cordon-exec helper, so a background job is its process group only (a descendant that calls setsid escapes terminate)',
  ]
}

/** One backend's verdict as lines a person reads. */
function backendLines(name: string, cap: BackendCapability): string[] {
  const lines: string[] = []
  lines.push(
    '',
    `${name}: ${cap.usable ? 'usable' : 'NOT usable'}${cap.version ? ` (${cap.version})` : ''}, probed in ${cap.probeMs.toFixed(1)} ms`,
  )
  if (!cap.usable) lines.push(`  why: ${cap.reason ?? 'unknown'}`)
  for (const refused of cap.refusedPrograms ?? []) lines.push(`  refused program: ${refused.path} (${refused.reason})`)
  if (name === 'seatbelt')
    lines.push(
      cap.verified
        ? '  verified: yes (its canary ran under sandbox-exec here and was refused what it must be)'
        : '  verified: no (unverified until its canary has run on a Mac)',
    )
  if (cap.enforcement) {
    for (const [mode, e] of Object.entries(cap.enforcement)) {
      lines.push(
        `  ${mode}: ${e.inherit} (network deny: ${e.deny}); governs ${(cap.governs?.[mode as keyof typeof cap.governs] ?? []).join(', ')}`,
      )
    }
  }
  for (const limit of cap.limitations) lines.push(`  limitation: ${limit}`)
  if (cap.remedy) lines.push(`  remedy: ${cap.remedy}`)
  return lines
}

/** The probe as text a person reads. */
export function renderCapabilities(caps: SandboxCapabilities): string {
  const lines: string[] = [`platform: ${caps.platform}; chain: ${caps.chain.join(' > ') || '(none)'}`]
  lines.push(...spawnPathLines(caps))
  for (const name of caps.chain) {
    const cap = caps.backends[name]
    if (cap) lines.push(...backendLines(name, cap))
  }
  if (!caps.chain.includes('seatbelt')) {
    lines.push(
      '',
      'seatbelt: not in this platform’s chain (macOS only); unverified until its canary has run on a Mac; `cordon explain --backend seatbelt` prints the profile a Mac would apply',
    )
  }
  return `${lines.join('\n')}\n`
}

/** Runs the `probe` verb; returns the exit status (0 even when nothing is usable: the probe is a report). */
export async function probeVerb(args: string[], io: { stdout: NodeJS.WritableStream }): Promise<number> {
  const { values, positionals } = parseWords(args, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } })
  if (values.help) {
    io.stdout.write(PROBE_HELP)
    return 0
  }
  if (positionals.length > 0) throw new UsageError(`takes no arguments, got "${displayLine(positionals[0] as string)}"`)
  // `cordon probe` always probes, and keeps the verdict for the other verbs.
  const sandbox = await LocalSandbox.create({ probeCache: 'refresh' })
  try {
    io.stdout.write(
      values.json ? `${JSON.stringify(sandbox.capabilities, null, 2)}\n` : renderCapabilities(sandbox.capabilities),
    )
  } finally {
    await sandbox.dispose()
  }
  return 0
}
