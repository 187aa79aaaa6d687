/**
 * `cordon explain`: the resolved policy, the backend the chain picks and why, and the exact rules
 * it would apply (Landlock rights per path and seccomp refusals, the bwrap argv, or the Seatbelt
 * profile), without running anything. `--backend seatbelt` renders the profile on any platform.
 */
import { type ExplainedLimit, explainedLimits, hostBounds } from '../sandbox/confinement/bounds.js'
import os from 'node:os'
import path from 'node:path'
import { DEFAULT_GRACE_MS, DEFAULT_NETWORK_POLICY, PROXY_PORT } from '../policy/defaults.js'
import { displayLine, escapeDisplayText } from '../policy/display-text.js'
import { isSandboxUnavailableError } from '../policy/errors.js'
import { type SourcesReport, sourceLines, sourcesReport } from '../policy/config/describe.js'
import { defaultsKept, HIDDEN_DEFAULT_NAMES } from '../policy/profiles/hidden-defaults.js'
import type { SandboxExecutionPolicy, SandboxPolicy } from '../policy/vocabulary.js'
import { explainEnvScrub } from '../subprocess/env/explain.js'
import { FS, NET, SCOPE } from '../sandbox/ruleset/landlock.js'
import { type ConfinedSpawn, LocalSandbox, seatbeltHiddenSet } from '../sandbox/local-sandbox.js'
import type { ConfinementPlan } from '../sandbox/confinement/plan.js'
import type { SyscallRule } from '../sandbox/seccomp/bpf.js'
import { seccompRulesFor } from '../sandbox/seccomp/rules.js'
import { explainSeatbelt } from '../sandbox/seatbelt/explain.js'
import { POLICY_HELP, parseWith, policyFrom } from './policy-options.js'
import { displayShellWord } from './shell-quote.js'
import { UsageError } from './usage-error.js'

/** `cordon explain --help`. */
export const EXPLAIN_HELP = `Usage: cordon explain [options]

Shows the resolved policy, the backend the chain picks and why, and the exact rules, without
running anything. \`--backend seatbelt\` prints the Seatbelt (macOS) profile on any platform.
Takes run's policy options:
${POLICY_HELP}
`

/** The names of the bits set in `mask`, from a name→bit table. */
function bitNames(mask: number, table: Readonly<Record<string, number>>): string[] {
  return Object.entries(table)
    .filter(([, bit]) => (mask & bit) !== 0)
    .map(([name]) => name.toLowerCase().replace(/_/g, '-'))
}

/**
 * The Seatbelt part of the report: the profile exactly as `sandbox-exec -p` receives it, the
 * launch argv, the per-class account, and whether a canary ever proved it on this host.
 */
export function seatbeltReport(
  policy: SandboxExecutionPolicy,
  options: { tempDir: string; verified: boolean; why: string; exampleTempDir: boolean },
): Record<string, unknown> {
  const e = explainSeatbelt(policy, {
    tempDir: options.tempDir,
    verified: options.verified,
    command: ['bash', '-c', '<command>'],
    // What a run's plan denies besides the policy's own: the default hidden set, cordon's dir.
    hiddenPaths: seatbeltHiddenSet(policy as SandboxPolicy),
  })
  const classes = Object.fromEntries(
    e.account.classes.filter((c) => c.promised).map((c) => [c.class, { governed: c.governed, how: c.reason }]),
  )
  return {
    policy,
    backend: 'seatbelt',
    enforcement: e.account.enforcement,
    verified: e.account.verified,
    why: options.why,
    classes,
    limitations: e.account.limitations,
    seatbelt: { profile: e.profile, argv: e.argv, rendered: e.rendered },
    tempDir: options.tempDir,
    ...(options.exampleTempDir ? { tempDirIsExample: true } : {}),
  }
}

/** The network part of the report: the policy, and for an allow-list its patterns, its one route and where names resolve. */
export interface NetworkReport {
  policy: 'inherit' | 'deny' | 'allow-list'
  how: string
  allow?: readonly string[]
  deny?: readonly string[]
  route?: string
  names?: string
}

/** What `policy` does to the command's network, as `explain` reports it. */
export function networkReport(policy: SandboxExecutionPolicy): NetworkReport {
  const network = policy.network ?? DEFAULT_NETWORK_POLICY
  const kind = typeof network === 'object' ? 'allow-list' : network
  if (policy.mode === 'danger-full-access')
    return { policy: kind, how: 'not enforced: danger-full-access runs the command unconfined, on the host network' }
  if (network === 'inherit') return { policy: kind, how: "the host's network, unchanged" }
  if (network === 'deny') return { policy: kind, how: 'cut: a private network namespace with loopback only' }
  return {
    policy: kind,
    how: "cut like deny, but for cordon's proxy: it reaches the hosts allowed and not denied",
    allow: network.allow,
    deny: network.deny ?? [],
    route: `none but the proxy: HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (both cases) are set to 127.0.0.1:${PROXY_PORT} in the sandbox; a client that ignores them reaches nothing`,
    names:
      'resolved only at the proxy: the command has no DNS of its own, and the proxy checks each name against the list, then the address it resolves to (a private, loopback or link-local one only when the list names that address)',
  }
}

/** The lines of the network part (every host escaped). */
function networkLines(n: NetworkReport | undefined): string[] {
  if (n === undefined) return []
  const lines = [`network: ${n.policy}: ${n.how}`]
  for (const host of n.allow ?? []) lines.push(`  allow: ${shown(host)}`)
  for (const host of n.deny ?? []) lines.push(`  deny: ${shown(host)} (wins over every allow pattern)`)
  if (n.route) lines.push(`  route: ${n.route}`)
  if (n.names) lines.push(`  names: ${n.names}`)
  return lines
}

/** Everything `explain` reports, as one JSON-able object; the network part last. */
export async function explainPolicy(flags: ReturnType<typeof policyFrom>): Promise<Record<string, unknown>> {
  return { ...(await explainPlan(flags)), network: networkReport(flags.policy), sources: sourcesReport(flags.config) }
}

/** The report of the backend and its rules. */
async function explainPlan(flags: ReturnType<typeof policyFrom>): Promise<Record<string, unknown>> {
  const { policy } = flags
  if (policy.mode === 'danger-full-access') {
    return {
      policy,
      backend: 'none',
      why: 'danger-full-access never asks a sandbox backend: the command runs unconfined',
    }
  }
  if (flags.backends?.length === 1 && flags.backends[0] === 'seatbelt' && process.platform !== 'darwin') {
    // Off macOS nothing can run it, but the profile a Mac would apply is the same pure rendering.
    return seatbeltReport(policy, {
      tempDir: path.join(os.tmpdir(), 'cordon-tmp-example'),
      verified: false,
      exampleTempDir: true,
      why: `seatbelt was asked for (--backend seatbelt); it runs only on macOS (this is ${process.platform}), so this is the profile a Mac would apply, rendered here and never enforced`,
    })
  }
  const { probeCache, backends, config } = flags
  const sandbox = await LocalSandbox.create({ probeCache, backends, config })
  try {
    const caps = sandbox.capabilities
    let confined: ConfinedSpawn
    try {
      confined = sandbox.confine(
        {
          argv: ['bash', '-c', '<command>'],
          cwd: process.cwd(),
          graceMs: DEFAULT_GRACE_MS,
          stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
        },
        policy,
      )
    } catch (error) {
      if (!isSandboxUnavailableError(error)) throw error
      return {
        policy,
        backend: 'none',
        error: { name: error.name, code: error.code, message: error.message },
        capabilities: caps,
      }
    }
    const chosen = confined.plan as NonNullable<ConfinedSpawn['plan']>
    const capability = caps.backends[chosen.backend]
    const why = `${chosen.backend} is the first backend of the chain (${caps.chain.join(' > ')}) that is usable here and enforces ${policy.mode} ${chosen.account.enforcement === 'full' ? 'fully' : 'partially (the best available)'}`
    if (chosen.backend === 'seatbelt') {
      return seatbeltReport(policy, {
        tempDir: chosen.tempDir ?? path.join(os.tmpdir(), 'cordon-tmp-example'),
        verified: chosen.verified,
        exampleTempDir: chosen.tempDir === undefined,
        why,
      })
    }
    const plan: ConfinementPlan = chosen
    const seccomp = seccompRulesFor(plan.seccomp.input)
    const s = plan.steps
    return {
      policy,
      backend: plan.backend,
      enforcement: plan.account.enforcement,
      why,
      classes: plan.account.classes,
      limitations: capability?.limitations ?? [],
      landlock: plan.ruleset && {
        abi: plan.ruleset.abi,
        handledFs: bitNames(plan.ruleset.handledFs, FS),
        handledNet: bitNames(plan.ruleset.handledNet, NET),
        scoped: bitNames(plan.ruleset.scoped, SCOPE),
        rules: plan.ruleset.rules.map((r) => ({ path: r.path, allowed: bitNames(r.allowed, FS), origin: r.origin })),
      },
      seccomp: plan.seccomp.program && {
        arch: seccomp.arch,
        instructions: plan.seccomp.program.length / 8,
        rules: seccomp.rules.map(describeRule),
      },
      namespaces: plan.namespaces,
      steps: {
        rlimits: s.rlimits,
        capabilities: `every capability set emptied${s.dropBounding ? ', the bounding set dropped and the securebits locked' : ''}`,
        noNewPrivs: s.noNewPrivs,
        supervisor: 'cordon-exec, outside the sandbox: a subreaper that ends every descendant with the run',
      },
      ...(plan.backend === 'bubblewrap'
        ? { bubblewrap: { version: capability?.version, argv: confined.spec.argv } }
        : {}),
      ...limitsAndTemp(plan),
      spillDir: confined.spillDir,
      hidden: {
        paths: plan.shield?.hidden ?? [],
        notHidden: plan.shield?.hiddenInWritable ?? [],
        defaultsOff: HIDDEN_DEFAULT_NAMES.filter((n) => !defaultsKept(policy).some((e) => e.name === n)),
      },
      protected: plan.mounts?.protected.paths.map((p) => p.path) ?? plan.shield?.protectedInWritable ?? [],
      environment: {
        mode: flags.environment,
        dropped: explainEnvScrub(process.env, { environment: flags.environment }).map((d) => ({
          name: d.name,
          rule: d.rule,
        })),
      },
    }
  } finally {
    await sandbox.dispose()
  }
}

/** The plan's limits as explain says them (each value, and its mechanism or `not governed`), and its TMPDIR. */
function limitsAndTemp(plan: ConfinementPlan): { limits: ExplainedLimit[]; tempDir: string | undefined } {
  const uid0 = (process.getuid?.() ?? 0) === 0 && plan.runAs === undefined
  return { limits: explainedLimits(plan.policy.limits, hostBounds(), uid0), tempDir: plan.tempDir }
}

/** One line per limit: `limit NAME: VALUE: how` (or why it is not governed). */
function limitLines(limits: readonly ExplainedLimit[] | undefined): string[] {
  return (limits ?? []).map((l) => `limit ${l.name}: ${l.value}: ${shown(l.how)}`)
}

/** One seccomp rule in words. */
function describeRule(rule: SyscallRule): string {
  if ('refuse' in rule) return `refuse ${rule.name}`
  if ('allowOnly' in rule)
    return `${rule.name}: allow only when ${rule.allowOnly.map((c) => `arg${c.arg} in {${c.oneOf.join(',')}}`).join(' and ')}`
  if ('refuseWhen' in rule)
    return `${rule.name}: refuse when arg${rule.refuseWhen.arg} in {${rule.refuseWhen.oneOf.join(',')}}`
  const hex = (n: number) => `0x${(n >>> 0).toString(16)}`
  if ('refuseWhenBits' in rule)
    return `${rule.name}: refuse when ${rule.refuseWhenBits.map((c) => `arg${c.arg} & ${hex(c.anyOf)}`).join(' and ')}`
  return `ioctl: refuse ${rule.commands.map(hex).join(' ')}${rule.inodeFamilies ? `; refuse inode-changing families ${rule.inodeFamilies.map(hex).join(' ')} except ${(rule.allowed ?? []).map(hex).join(' ')}` : ''}`
}

/**
 * A path or other text from the filesystem, the environment or the host as one line a person can
 * read: every control, bidi and invisible character (the newline too) a visible escape, nothing cut.
 */
function shown(s: string): string {
  return displayLine(s, Number.MAX_SAFE_INTEGER)
}

/** The report's fields renderExplanation reads. */
interface ExplainReport {
  policy: { mode: string; workspaceRoot: string; writableRoots?: string[] }
  network?: NetworkReport
  sources?: SourcesReport
  backend: string
  enforcement?: string
  why?: string
  error?: { message: string }
  limitations?: string[]
  landlock?: {
    abi: number
    handledFs: string[]
    handledNet: string[]
    scoped: string[]
    rules: { path: string; allowed: string[]; origin: string }[]
  }
  seccomp?: { arch: string; instructions: number; rules: string[] }
  classes?: Record<string, { governed: boolean; how: string }>
  namespaces?: { ipc: boolean; net: boolean; user: boolean }
  steps?: { capabilities: string; supervisor: string; rlimits?: { resource: number; soft: number; hard: number }[] }
  bubblewrap?: { version?: string; argv: string[] }
  seatbelt?: { profile: string; argv: string[] }
  verified?: boolean
  limits?: ExplainedLimit[]
  tempDir?: string
  spillDir?: string
  tempDirIsExample?: boolean
  hidden?: { paths: string[]; notHidden: string[]; defaultsOff: string[] }
  protected?: string[]
  environment?: { mode: string; dropped: { name: string; rule: string }[] }
}

/** The explanation as text a person reads; every path and host-given text escaped (display-text.ts). */
export function renderExplanation(report: Record<string, unknown>): string {
  const r = report as unknown as ExplainReport
  const p = r.policy
  const lines = [
    `policy: mode ${p.mode}, root ${shown(p.workspaceRoot)}, network ${r.network?.policy}${p.writableRoots?.length ? `, writable ${p.writableRoots.map(shown).join(', ')}` : ''}`,
    `backend: ${r.backend}${r.enforcement ? ` (${r.enforcement})` : ''}${r.backend === 'seatbelt' ? (r.verified ? ', verified by the probe' : ', unverified (its canary has not run on a Mac)') : ''}`,
  ]
  lines.push(...networkLines(r.network), ...sourceLines(r.sources))
  if (r.why) lines.push(`why: ${shown(r.why)}`)
  if (r.error) lines.push(`error: ${shown(r.error.message)}`)
  for (const [name, v] of Object.entries(r.classes ?? {})) {
    if (name !== 'signals') lines.push(`  ${v.governed ? 'governed' : 'NOT governed'}: ${name}: ${shown(v.how)}`)
  }
  for (const l of r.limitations ?? []) lines.push(`limitation: ${shown(l)}`)
  if (r.landlock) {
    const l = r.landlock
    lines.push(
      `landlock ABI ${l.abi}: handles ${l.handledFs.join(' ')}${l.handledNet.length ? `; net ${l.handledNet.join(' ')}` : ''}; scopes ${l.scoped.join(' ') || 'none'}`,
    )
    for (const rule of l.rules)
      lines.push(`  allow ${shown(rule.path)}: ${rule.allowed.join(' ')}  [${shown(rule.origin)}]`)
  }
  if (r.seccomp) {
    const s = r.seccomp
    lines.push(`seccomp (${s.arch}, ${s.instructions} instructions): refuse foreign-architecture and x32 syscalls`)
    for (const rule of s.rules) lines.push(`  ${rule}`)
  }
  if (r.namespaces) {
    const n = r.namespaces
    const names = [n.ipc && 'ipc', n.net && 'network (loopback only)', n.user && 'user (to allow the others)'].filter(
      Boolean,
    )
    if (names.length > 0) lines.push(`private namespaces: ${names.join(', ')}`)
  }
  if (r.bubblewrap) {
    lines.push(`bubblewrap${r.bubblewrap.version ? ` (${r.bubblewrap.version})` : ''} argv:`)
    lines.push(`  ${r.bubblewrap.argv.map((a) => (/^[\w@%+=:,./<>-]+$/.test(a) ? a : displayShellWord(a))).join(' ')}`)
  }
  if (r.seatbelt) {
    lines.push(`seatbelt launch: ${r.seatbelt.argv.map(shown).join(' ')}`)
    lines.push('seatbelt profile (<profile> above, exactly as sandbox-exec -p receives it):')
    lines.push(...r.seatbelt.profile.replace(/\n$/, '').split('\n').map(shown))
  }
  if (r.steps) {
    lines.push(`capabilities: ${r.steps.capabilities}; no_new_privs`)
    lines.push(`limits: ${(r.steps.rlimits ?? []).map((l) => `rlimit ${l.resource} = ${l.soft}`).join(', ')}`)
    lines.push(`supervisor: ${r.steps.supervisor}`)
  }
  lines.push(...limitLines(r.limits))
  if (r.tempDir)
    lines.push(
      r.tempDirIsExample
        ? `TMPDIR: ${shown(r.tempDir)} (an example: each session gets its own private temp dir)`
        : `TMPDIR: ${shown(r.tempDir)} (this session's private temp dir)`,
    )
  if (r.spillDir) lines.push(`spill: ${shown(r.spillDir)} (this session's spill files, readable by its commands)`)
  if (r.hidden) {
    const h = r.hidden
    lines.push(`hidden (${h.paths.length} existing paths; names stay listable under Landlock):`)
    for (const p of h.paths) lines.push(`  ${shown(p)}`)
    for (const p of h.notHidden) lines.push(`  NOT hidden (inside a writable root): ${shown(p)}`)
    if (h.defaultsOff.length > 0) lines.push(`  default entries turned off: ${h.defaultsOff.join(', ')}`)
  }
  if (r.protected && r.protected.length > 0) {
    lines.push('protected (read-only inside a writable root):')
    for (const p of r.protected) lines.push(`  ${shown(p)}`)
  }
  if (r.environment) {
    const e = r.environment
    lines.push(
      `environment: ${e.mode}; names not passed: ${e.dropped.map((d) => `${shown(d.name)} (${d.rule})`).join(', ') || 'none'}`,
    )
  }
  // Each line again, should a field above be missed: nothing raw reaches the terminal.
  return `${lines.map(escapeDisplayText).join('\n')}\n`
}

/** Runs the `explain` verb; returns the exit status. */
export async function explainVerb(args: string[], io: { stdout: NodeJS.WritableStream }): Promise<number> {
  const { values, positionals } = parseWith(args, {})
  if (values.help) {
    io.stdout.write(EXPLAIN_HELP)
    return 0
  }
  if (positionals.length > 0)
    throw new UsageError(
      `runs nothing and takes no command (got "${displayLine(positionals[0] as string)}"); give only run's policy options`,
    )
  const flags = policyFrom(values)
  const report = await explainPolicy(flags)
  io.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : renderExplanation(report))
  return 0
}
