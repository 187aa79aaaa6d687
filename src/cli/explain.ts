/**
 * `cordon explain`: the resolved policy, the backend the chain picks and why, and the exact rules
 * it would apply (Landlock rights per path and seccomp refusals, or the bwrap argv), without
 * running anything.
 */
import { isSandboxUnavailableError } from '../policy/errors.js'
import { grantsFor } from '../policy/grants.js'
import type { SandboxPolicy } from '../policy/vocabulary.js'
import { bubblewrapArgv } from '../sandbox/bubblewrap.js'
import { FS, NET, planRuleset, SCOPE, statPath } from '../sandbox/landlock.js'
import { LocalSandbox } from '../sandbox/local-sandbox.js'
import { hostSeccompArch, seccompRulesFor } from '../sandbox/seccomp.js'
import { selectBackend } from '../sandbox/select.js'
import { POLICY_HELP, parseWith, policyFrom } from './policy-options.js'

/** `cordon explain --help`. */
export const EXPLAIN_HELP = `Usage: cordon explain [options]

Shows the resolved policy, the backend the chain picks and why, and the exact rules, without
running anything. Takes run's policy options:
${POLICY_HELP}
`

/** The names of the bits set in `mask`, from a name→bit table. */
function bitNames(mask: number, table: Readonly<Record<string, number>>): string[] {
  return Object.entries(table)
    .filter(([, bit]) => (mask & bit) !== 0)
    .map(([name]) => name.toLowerCase().replace(/_/g, '-'))
}

/** Everything `explain` reports, as one JSON-able object. */
export async function explainPolicy(flags: ReturnType<typeof policyFrom>): Promise<Record<string, unknown>> {
  const { policy } = flags
  if (policy.mode === 'danger-full-access') {
    return {
      policy,
      backend: 'none',
      why: 'danger-full-access never asks a sandbox backend: the command runs unconfined',
    }
  }
  const sandbox = await LocalSandbox.create(flags.backends ? { backends: flags.backends } : {})
  try {
    const caps = sandbox.capabilities
    let choice: ReturnType<typeof selectBackend>
    try {
      choice = selectBackend(caps, policy as SandboxPolicy)
    } catch (error) {
      if (!isSandboxUnavailableError(error)) throw error
      return {
        policy,
        backend: 'none',
        error: { name: error.name, code: error.code, message: error.message },
        capabilities: caps,
      }
    }
    const grants = grantsFor(policy, { tempDir: '/tmp/cordon-tmp-<session>' })
    const why = `${choice.backend} is the first backend of the chain (${caps.chain.join(' > ')}) that is usable here and enforces ${policy.mode} ${choice.enforcement === 'full' ? 'fully' : 'partially (the best available)'}`
    const chosen = {
      policy,
      backend: choice.backend,
      enforcement: choice.enforcement,
      why,
      limitations: choice.capability.limitations,
    }
    if (choice.backend === 'bubblewrap') {
      const argv = bubblewrapArgv(grants, {
        bwrapPath: choice.capability.executable ?? 'bwrap',
        network: policy.network ?? 'inherit',
        tempDir: grants.tempDir,
        cwd: process.cwd(),
        command: ['bash', '-c', '<command>'],
      })
      return {
        ...chosen,
        bubblewrap: { version: choice.capability.version, argv },
        capabilities:
          'bwrap drops every capability inside (--cap-drop ALL); no_new_privs' +
          (choice.capability.seccomp ? '; seccomp refuses io_uring and foreign-architecture syscalls' : '') +
          (choice.capability.landlockScopes
            ? '; a Landlock scope refuses host abstract unix sockets and signals to host processes'
            : ''),
      }
    }
    const abi = choice.capability.abi ?? 0
    // The session temp dir does not exist until a run: explain it as the directory it will be.
    const plan = planRuleset(grants, abi, (path) =>
      path.includes('<session>') ? { dev: 0, ino: 0, directory: true } : statPath(path),
    )
    const arch = hostSeccompArch()
    const seccomp = arch
      ? seccompRulesFor({
          arch,
          mode: policy.mode as 'read-only' | 'workspace-write',
          network: policy.network ?? 'inherit',
        })
      : undefined
    return {
      ...chosen,
      landlock: {
        abi,
        handledFs: bitNames(plan.handledFs, FS),
        handledNet: bitNames(plan.handledNet, NET),
        scoped: bitNames(plan.scoped, SCOPE),
        rules: plan.rules.map((r) => ({ path: r.path, allowed: bitNames(r.allowed, FS), origin: r.origin })),
      },
      seccomp: seccomp && {
        arch: seccomp.arch,
        refuseForeignArchAndX32: true,
        refuse: seccomp.refuse,
        refuseIoctls: (seccomp.ioctlCommands ?? []).map((n) => `0x${n.toString(16)}`),
        socketFamiliesAllowed: seccomp.socketFamilies ?? 'all',
      },
      capabilities: 'every capability set emptied; securebits locked; no_new_privs',
    }
  } finally {
    await sandbox.dispose()
  }
}

/** The explanation as text a person reads. */
export function renderExplanation(report: Record<string, unknown>): string {
  const r = report as {
    policy: { mode: string; workspaceRoot: string; writableRoots?: string[]; network?: string }
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
    seccomp?: { arch: string; refuse: string[]; refuseIoctls: string[]; socketFamiliesAllowed: number[] | 'all' }
    bubblewrap?: { version?: string; argv: string[] }
    capabilities?: string
  }
  const p = r.policy
  const lines = [
    `policy: mode ${p.mode}, root ${p.workspaceRoot}, network ${p.network ?? 'inherit'}${p.writableRoots?.length ? `, writable ${p.writableRoots.join(', ')}` : ''}`,
    `backend: ${r.backend}${r.enforcement ? ` (${r.enforcement})` : ''}`,
  ]
  if (r.why) lines.push(`why: ${r.why}`)
  if (r.error) lines.push(`error: ${r.error.message}`)
  for (const l of r.limitations ?? []) lines.push(`limitation: ${l}`)
  if (r.landlock) {
    const l = r.landlock
    lines.push(
      `landlock ABI ${l.abi}: handles ${l.handledFs.join(' ')}${l.handledNet.length ? `; net ${l.handledNet.join(' ')}` : ''}; scopes ${l.scoped.join(' ') || 'none'}`,
    )
    for (const rule of l.rules) lines.push(`  allow ${rule.path}: ${rule.allowed.join(' ')}  [${rule.origin}]`)
  }
  if (r.seccomp) {
    const s = r.seccomp
    lines.push(`seccomp (${s.arch}): refuse foreign-architecture and x32 syscalls; refuse ${s.refuse.join(' ')}`)
    if (s.refuseIoctls.length) lines.push(`  refuse ioctl ${s.refuseIoctls.join(' ')}`)
    lines.push(`  sockets: ${s.socketFamiliesAllowed === 'all' ? 'every family' : 'AF_UNIX only'}`)
  }
  if (r.bubblewrap) {
    lines.push(`bubblewrap${r.bubblewrap.version ? ` (${r.bubblewrap.version})` : ''} argv:`)
    lines.push(
      `  ${r.bubblewrap.argv.map((a) => (/^[\w@%+=:,./<>-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')}`,
    )
  }
  if (r.capabilities) lines.push(`capabilities: ${r.capabilities}`)
  return `${lines.join('\n')}\n`
}

/** Runs the `explain` verb; returns the exit status. */
export async function explainVerb(args: string[], io: { stdout: NodeJS.WritableStream }): Promise<number> {
  const { values } = parseWith(args, {})
  if (values.help) {
    io.stdout.write(EXPLAIN_HELP)
    return 0
  }
  const flags = policyFrom(values)
  const report = await explainPolicy(flags)
  io.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : renderExplanation(report))
  return 0
}
