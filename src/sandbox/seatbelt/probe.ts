/**
 * The Seatbelt probe (darwin): `/usr/bin/sandbox-exec` present and executable, then canaries
 * run through the very profiles and argv a confined run uses, spawned with `child_process` (no
 * native addon on macOS). The workspace-write canary must write inside its root and be refused
 * a write beside it, a read of a hidden file, a write into a protected dir and the rename of
 * that dir's parent; the read-only canary must write only its temp dir. The host checks the
 * files and that the refusals read as EPERM's text, which `src/sandbox/denials/classify.ts` classifies as denials.
 *
 * Until a canary has passed on this host the backend is unverified: elsewhere than macOS the
 * probe says so, and says that Seatbelt is macOS-only. It never throws for an unusable backend.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DEFAULT_SEATBELT_CANARY_TIMEOUT_MS } from '../../policy/defaults.js'
import { grantsFor } from '../../policy/grants.js'
import { REMEDY_SANDBOX_EXEC, REMEDY_SEATBELT_OVERREACH, REMEDY_SEATBELT_UNENFORCED } from '../../policy/remedies.js'
import type { ConfinedSandboxMode, EffectClass, SandboxEnforcement } from '../../policy/vocabulary.js'
import { DENIAL_SIGNATURES } from '../confinement/denial-text.js'
import type { BackendCapability } from '../../policy/backends.js'
import { renderSeatbeltProfile } from './profile.js'
import { seatbeltEffectClasses, seatbeltEnforcement } from './account.js'
import { SANDBOX_EXEC, seatbeltLaunchArgv } from './launch.js'
import { childProcess } from '../../subprocess/lazy-builtins.js'
import { checkTrustedProgram, identityFacts, type ProgramIdentity } from '../../subprocess/trusted-program.js'

/** What the probe learned about Seatbelt: a BackendCapability, plus whether a canary proved it here. */
export interface SeatbeltCapability extends Omit<BackendCapability, 'backend'> {
  backend: 'seatbelt'
  /** A canary ran under sandbox-exec on this host and was refused everything it had to be. */
  verified: boolean
  /** The refusals read as EPERM's text ("Operation not permitted"), which denial facts rely on. */
  denialText?: boolean
}

/** Options for probeSeatbelt (tests inject the platform and a stand-in sandbox-exec). */
export interface SeatbeltProbeOptions {
  /** Default `process.platform`. */
  platform?: NodeJS.Platform | undefined
  /** Default `/usr/bin/sandbox-exec`; only tests point elsewhere. */
  sandboxExec?: string | undefined
  /** The shell the canary runs in; default `/bin/sh`. */
  shell?: string | undefined
  /** Budget per canary (ms); default 3000. */
  timeoutMs?: number | undefined
  /** Where the canary's scratch dir is made; default `os.tmpdir()`. */
  tmpdir?: string | undefined
}

export { REMEDY_SANDBOX_EXEC } from '../../policy/remedies.js'

const SECRET = 'cordon-seatbelt-canary-secret'

// $1 scratch dir. Each refusal that does not happen exits with its own code; the last write is
// refused with stderr open, so the host can see the denial text.
const WRITE_CANARY = [
  'echo ok > "$1/root/ok" || exit 10',
  'if (echo x > "$1/denied") 2>/dev/null; then exit 11; fi',
  'if cat "$1/secret" 2>/dev/null; then exit 12; fi',
  'if (echo x > "$1/root/.git/hooks/pre-commit") 2>/dev/null; then exit 13; fi',
  'if mv "$1/root/.git" "$1/root/moved" 2>/dev/null; then exit 14; fi',
  '(echo x > "$1/denied")',
  'exit 0',
].join('\n')

// $1 scratch dir, $2 the session temp dir.
const READ_ONLY_CANARY = [
  'echo ok > "$2/ok" || exit 10',
  'if (echo x > "$1/root/ro") 2>/dev/null; then exit 11; fi',
  'exit 0',
].join('\n')

const WHY_EXIT: Readonly<Record<number, string>> = {
  10: 'the canary could not write inside its own grant',
  11: 'the canary was NOT denied a write outside its grant',
  12: 'the canary was NOT denied a read of a hidden file',
  13: 'the canary was NOT denied a write into a protected dir',
  14: 'the canary was NOT denied the rename of a protected dir’s parent',
}

/** `sandboxExec` checked like every program the host runs (owner, modes, every directory above it). */
function trustedSandboxExec(
  sandboxExec: string,
): { identity: ProgramIdentity } | Pick<SeatbeltCapability, 'reason' | 'remedy' | 'refusedPrograms'> {
  const trust = checkTrustedProgram(sandboxExec)
  if (trust.ok) return { identity: trust.identity }
  return {
    reason: `${sandboxExec} is refused: ${trust.reason}`,
    remedy: REMEDY_SANDBOX_EXEC,
    ...(fs.existsSync(sandboxExec) ? { refusedPrograms: [{ path: trust.path, reason: trust.reason }] } : {}),
  }
}

/** Probes Seatbelt with its canaries; never throws. */
export async function probeSeatbelt(options: SeatbeltProbeOptions = {}): Promise<SeatbeltCapability> {
  const started = performance.now()
  const platform = options.platform ?? process.platform
  const done = (cap: Omit<SeatbeltCapability, 'probeMs' | 'backend' | 'limitations'>): SeatbeltCapability => ({
    backend: 'seatbelt',
    limitations: seatbeltLimitations(cap.verified),
    ...cap,
    probeMs: performance.now() - started,
  })
  if (platform !== 'darwin') {
    return done({
      usable: false,
      verified: false,
      reason: `Seatbelt is macOS-only (this is ${platform}); here its profiles are rendered and checked, never enforced, so the backend is unverified`,
      remedy:
        'On Linux use the landlock or bubblewrap backend; `cordon explain --backend seatbelt` shows the profile a Mac would apply.',
    })
  }
  const sandboxExec = options.sandboxExec ?? SANDBOX_EXEC
  const trust = trustedSandboxExec(sandboxExec)
  if (!('identity' in trust)) return done({ usable: false, verified: false, ...trust })
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(options.tmpdir ?? os.tmpdir(), 'cordon-probe-seatbelt-')))
  try {
    fs.mkdirSync(path.join(dir, 'root', '.git', 'hooks'), { recursive: true })
    fs.mkdirSync(path.join(dir, 'tmp'))
    fs.writeFileSync(path.join(dir, 'secret'), SECRET)
    const policy = {
      workspaceRoot: path.join(dir, 'root'),
      protectedPaths: [path.join(dir, 'root', '.git', 'hooks')],
      hiddenPaths: [path.join(dir, 'secret')],
      network: 'deny' as const,
    }
    const tempDir = path.join(dir, 'tmp')
    const write = await canary(
      sandboxExec,
      renderSeatbeltProfile(grantsFor({ ...policy, mode: 'workspace-write' }, { tempDir })).profile,
      [WRITE_CANARY, 'cordon-canary', dir],
      options,
    )
    const base = {
      executable: sandboxExec,
      executableIdentity: identityFacts(trust.identity),
      version: `Seatbelt (sandbox-exec, Darwin ${os.release()})`,
    }
    const writeFailure = judge(write, () => {
      if (!fs.existsSync(path.join(dir, 'root', 'ok'))) return 10
      if (fs.existsSync(path.join(dir, 'denied'))) return 11
      if (write.stdout.includes(SECRET)) return 12
      if (fs.existsSync(path.join(dir, 'root', '.git', 'hooks', 'pre-commit'))) return 13
      if (!fs.existsSync(path.join(dir, 'root', '.git'))) return 14
      return undefined
    })
    if (writeFailure !== undefined) return done({ ...base, usable: false, verified: false, ...writeFailure })
    const readOnly = await canary(
      sandboxExec,
      renderSeatbeltProfile(grantsFor({ ...policy, mode: 'read-only' }), { tempDir }).profile,
      [READ_ONLY_CANARY, 'cordon-canary', dir, tempDir],
      options,
    )
    const readOnlyFailure = judge(readOnly, () => {
      if (!fs.existsSync(path.join(tempDir, 'ok'))) return 10
      if (fs.existsSync(path.join(dir, 'root', 'ro'))) return 11
      return undefined
    })
    if (readOnlyFailure !== undefined) return done({ ...base, usable: false, verified: false, ...readOnlyFailure })
    const denialText = (DENIAL_SIGNATURES.seatbelt ?? []).some((sig) => write.stderr.toLowerCase().includes(sig))
    return done({
      ...base,
      usable: true,
      verified: true,
      denialText,
      enforcement: seatbeltEnforcementTable(),
      governs: seatbeltGovernsTable(),
      remedy: denialText
        ? 'Seatbelt is partial in every mode: lifetime (macOS has no subreaper) and resources are not governed, nor process priority; use Linux with bubblewrap for full.'
        : `the canary's refusals did not read as "${DENIAL_SIGNATURES.seatbelt?.join('" or "')}", so denials will not be reported as such on this host`,
    })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Enforcement per confined mode and network policy, from the rendered profiles (always partial). */
export function seatbeltEnforcementTable(): Record<
  ConfinedSandboxMode,
  { inherit: SandboxEnforcement; deny: SandboxEnforcement }
> {
  const of = (mode: ConfinedSandboxMode, network: 'inherit' | 'deny') =>
    seatbeltEnforcement(renderSeatbeltProfile(sampleGrants(mode, network))).enforcement
  return {
    'read-only': { inherit: of('read-only', 'inherit'), deny: of('read-only', 'deny') },
    'workspace-write': { inherit: of('workspace-write', 'inherit'), deny: of('workspace-write', 'deny') },
  }
}

/** The effect classes governed per confined mode, in the vocabulary's current words (network as under `deny`). */
export function seatbeltGovernsTable(): Record<ConfinedSandboxMode, EffectClass[]> {
  const of = (mode: ConfinedSandboxMode) =>
    seatbeltEffectClasses(seatbeltEnforcement(renderSeatbeltProfile(sampleGrants(mode, 'deny'))))
  return { 'read-only': of('read-only'), 'workspace-write': of('workspace-write') }
}

function seatbeltLimitations(verified: boolean): string[] {
  return seatbeltEnforcement(renderSeatbeltProfile(sampleGrants('workspace-write', 'inherit')), { verified })
    .limitations
}

// A policy whose paths are never touched: only the shape of the account depends on it.
function sampleGrants(mode: ConfinedSandboxMode, network: 'inherit' | 'deny') {
  return grantsFor({ mode, workspaceRoot: '/cordon-probe-sample', network })
}

interface CanaryRun {
  exitCode: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Why the canary could not be run at all. */
  error?: string
}

async function canary(
  sandboxExec: string,
  profile: string,
  script: readonly string[],
  options: SeatbeltProbeOptions,
): Promise<CanaryRun> {
  const [, ...args] = seatbeltLaunchArgv({ profile, command: [options.shell ?? '/bin/sh', '-c', ...script] })
  const timeoutMs = options.timeoutMs ?? DEFAULT_SEATBELT_CANARY_TIMEOUT_MS
  return await new Promise<CanaryRun>((resolve) => {
    let stdout = ''
    let stderr = ''
    let settled = false
    const child = childProcess().spawn(sandboxExec, args, {
      cwd: '/',
      env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin', LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout ends the whole canary
    })
    const finish = (run: CanaryRun) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(run)
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
      finish({ exitCode: null, signal: 'SIGKILL', stdout, stderr, error: `did not finish within ${timeoutMs} ms` })
    }, timeoutMs)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', (error) => finish({ exitCode: null, signal: null, stdout, stderr, error: error.message }))
    child.on('close', (exitCode, signal) => finish({ exitCode, signal, stdout, stderr }))
  })
}

/** Why a canary run shows Seatbelt unusable (undefined when it passed); `check` re-reads the files. */
function judge(run: CanaryRun, check: () => number | undefined): { reason: string; remedy: string } | undefined {
  if (run.error !== undefined) return { reason: `the Seatbelt canary ${run.error}`, remedy: REMEDY_SANDBOX_EXEC }
  const refusal = run.stderr.split(/\r?\n/).find((line) => /^sandbox-exec:|sandbox_apply/.test(line))
  if (refusal !== undefined) {
    return { reason: `sandbox-exec refused to apply the profile (${refusal.trim()})`, remedy: REMEDY_SANDBOX_EXEC }
  }
  const failed = check() ?? (run.exitCode === 0 ? undefined : (run.exitCode ?? 0))
  if (failed === undefined) return undefined
  const why = WHY_EXIT[failed] ?? `the canary exited ${run.exitCode ?? run.signal}`
  return {
    reason: `sandbox-exec ran but ${why}`,
    remedy: failed === 10 ? REMEDY_SEATBELT_OVERREACH : REMEDY_SEATBELT_UNENFORCED,
  }
}
