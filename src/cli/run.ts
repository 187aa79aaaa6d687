/**
 * `cordon run`: one command through the executor, confined, its output streamed, its facts
 * told on stderr, and its status as the exit code (124 timeout, 128+N signal, 125 cordon).
 */
import { fstatSync } from 'node:fs'
import { isIP } from 'node:net'
import { constants as osConstants } from 'node:os'
import type { Readable } from 'node:stream'
import type { NetworkFacts } from '../policy/network/facts.js'
import { INVALID_HOST_PREFIX, moreText, type Refusal, refusalText, shownRefusals } from '../policy/network/refusals.js'
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS } from '../policy/defaults.js'
import { displayLine } from '../policy/display-text.js'
import type { SandboxExecutionPolicy } from '../policy/vocabulary.js'
import { hiddenEntriesFor } from '../sandbox/denials/hidden-writes.js'
import { removalsIn, writeRemedy } from '../sandbox/remedy.js'
import { privateSubdir, sweepOldFiles } from '../subprocess/private-dirs/layout.js'
import { outputFilterFor } from './terminal-filter.js'
import { LocalSandbox, type LocalSandboxOptions } from '../sandbox/local-sandbox.js'
import { LocalShellExecutor, type ShellSandbox } from '../shell/executor.js'
import type { ShellExecSpec, ShellRunResult } from '../shell/types.js'
import { keptEnv, POLICY_HELP, parseWith, policyFrom } from './policy-options.js'
import { runInTerminal, type TerminalIo } from './shell.js'
import { displayShellWord } from './shell-quote.js'
import { MAX_TIMER_DELAY_MS } from '../subprocess/spec/limits.js'
import { oneWordHint, runCommandFrom } from './invocation/command.js'
import { workingDirectory } from './invocation/cwd.js'
import { timeoutFrom } from './invocation/timeout.js'
import { EXIT_TIMED_OUT, UsageError } from './usage-error.js'

/** `cordon run --help`. */
export const RUN_HELP = `Usage: cordon run [options] -- WORD...
       cordon run [options] -c 'COMMAND'

Runs WORD... as one bash command (each word shell-quoted, so \`-- echo 'a b'\` prints a b), or
COMMAND as bash reads it (pipes, $VARS, globs), confined to the policy.
Exit status: the command's; 124 on timeout; 128+N when killed by signal N; 125 when cordon
itself could not run it (bad usage, or no sandbox can enforce the mode: SANDBOX_UNAVAILABLE).

Options:
${POLICY_HELP}
  -c, --command STRING   run STRING as a bash command, as it is (instead of -- WORD...)
      --timeout MS       kill the command after MS milliseconds: digits, 1 to ${MAX_TIMER_DELAY_MS}
                         (default ${DEFAULT_TIMEOUT_MS})
      --tty              run it on a terminal cordon allocates, relayed to yours (for tools that
                         need one), confined the same way
      --raw-output       pass every escape sequence to your terminal (by default, on a terminal,
                         clipboard writes, title changes, terminal queries and DCS/APC strings
                         the command prints are dropped)
  -h, --help             this help

\`cordon schema run\` prints the JSON Schema of --json's output.
`

/** The process exit status for a run result, as timeout(1) and shells report it. */
export function exitStatusOf(result: ShellRunResult): number {
  if (result.timedOut) return EXIT_TIMED_OUT
  if (result.signal !== null) return 128 + (osConstants.signals[result.signal] ?? 0)
  return result.exitCode ?? 1
}

/** The command text of a run and where it ran: what it removes widens its remedy (src/sandbox/remedy/removals.ts). */
export interface DeniedRun {
  command: string
  cwd: string
}

/**
 * The lines that tell a person what was denied and which flag would allow it: the file denial's
 * one line, and under a network allow-list a line per refused destination.
 */
export function denialLine(
  result: ShellRunResult,
  policy: SandboxExecutionPolicy,
  run?: DeniedRun,
): string | undefined {
  const facts = result.sandbox
  if (!facts?.denied) return refusalLines(result, policy, run)
  // Facts without `deniedFor` come from a file denial (the only kind there was before the proxy).
  const forFiles = facts.deniedFor === undefined || facts.deniedFor.includes('files')
  const lines = [
    ...(forFiles ? [fileDenialLine(facts, policy, run)] : []),
    ...(facts.deniedFor?.includes('network') ? networkDenialLines(facts.network) : []),
  ]
  return lines.length > 0 ? lines.join('\n') : undefined
}

/** The line that names what the scrub removed from a failed run's environment (names only), and how to keep one. */
export function removedEnvLine(result: ShellRunResult): string | undefined {
  const names = result.sandbox?.removedEnv ?? []
  if (names.length === 0) return undefined
  return `cordon: removed from the environment: ${names.map((n) => displayLine(n)).join(', ')} (--keep-env NAME to pass one)`
}

/** A run that did not fail on what the sandbox refused (exit 0): the same line, and that the write is lost. */
function refusalLines(result: ShellRunResult, policy: SandboxExecutionPolicy, run?: DeniedRun): string | undefined {
  const refused = result.sandbox?.refusedPaths ?? []
  if (result.sandbox === undefined || refused.length === 0) return undefined
  const line = fileDenialLine({ ...result.sandbox, deniedPaths: refused }, policy, run)
  const how = result.exitCode === 0 ? 'exited 0' : 'ended'
  return `${line}\ncordon: the command ${how} all the same, without ${refused.length === 1 ? 'that write' : 'those writes'}`
}

/** How a refused destination could be allowed, in flags. */
function allowingFlag(refusal: Refusal): string {
  switch (refusal.reason) {
    case 'not-allowed':
      return refusal.host.startsWith(INVALID_HOST_PREFIX)
        ? 'no flag allows it: the command asked for something that is not a host name'
        : `to allow it: --allow-host ${displayShellWord(refusal.host)}`
    case 'denied':
      return 'to allow it: drop the --deny-host pattern that covers it (--allow-host cannot override it)'
    case 'address':
      return isIP(refusal.host) !== 0
        ? `to allow it: --allow-host ${displayShellWord(refusal.host)}`
        : 'to allow it: --allow-host ADDRESS, naming the address itself (a name never reaches such an address)'
    case 'server-name':
      return 'no flag allows it: the client must name the same host in CONNECT and in TLS'
  }
}

/** One line per refused destination (at most a few, then how many more), each with the flag that allows it. */
export function networkDenialLines(network: NetworkFacts | undefined): string[] {
  const { shown, more } = shownRefusals(network)
  const count = shown.length + more
  if (count === 0) return ['cordon: the network allow-list refused a connection (which one is unknown)']
  const lines = [`cordon: the network allow-list refused ${count === 1 ? 'a destination' : `${count} destinations`}:`]
  for (const refusal of shown) lines.push(`cordon:   ${refusalText(refusal)}; ${allowingFlag(refusal)}`)
  const rest = moreText(more)
  if (rest !== undefined) lines.push(`cordon:   ${rest}`)
  return lines
}

/** The one line of a file denial: the paths, the mode, and the flags to add that allow them (never the mode in force). */
function fileDenialLine(
  facts: NonNullable<ShellRunResult['sandbox']>,
  policy: SandboxExecutionPolicy,
  run: DeniedRun | undefined,
): string {
  const paths = facts.deniedPaths ?? []
  if (paths.length === 0) {
    const flag =
      facts.mode === 'read-only'
        ? '--mode workspace-write allows it if it was inside the workspace root'
        : '--writable DIR allows it if it was in DIR'
    return `cordon: sandbox denied a write under ${facts.mode} mode (which path is unknown: the command changed directory); ${flag} (or --mode danger-full-access)`
  }
  // The paths come from the command's output: shown escaped, so none can act on the terminal.
  const what = `cordon: sandbox denied a write to ${paths.map((p) => displayLine(p)).join(', ')} under ${facts.mode} mode`
  const remedy = writeRemedy(policy, paths, run ? removalsIn(run.command, run.cwd) : [])
  if (remedy.unreachable.length > 0) {
    return `${what}; no writable root can allow ${remedy.unreachable.map((p) => displayLine(p)).join(', ')} (a host temp dir, a system dir, the home dir or cordon's own package: write to $TMPDIR, or use --mode danger-full-access)`
  }
  // A write at a hidden place needs its entry shown too (a writable root does not unhide it).
  const shown = hiddenEntriesFor(policy, paths).map((name) => `--show ${name}`)
  const flags = [
    ...(remedy.mode ? [`--mode ${remedy.mode}`] : []),
    ...shown,
    ...remedy.writableRoots.map((r) => `--writable ${displayShellWord(r)}`),
    ...remedy.unprotect.map((p) => `--unprotect ${displayShellWord(p)}`),
  ]
  const byPolicy = remedy.protectedByPolicy.length > 0
  const allow =
    flags.length > 0 || byPolicy
      ? `${[...flags, ...(byPolicy ? ['(without those --protect paths)'] : [])].join(' ')} (or --mode danger-full-access)`
      : '--mode danger-full-access'
  const why =
    remedy.unprotect.length > 0 || byPolicy
      ? `\ncordon: it is protected inside the writable root (${byPolicy ? 'by --protect' : 'git hooks and config, and the editor, agent and shell files tools run unasked, are read-only by default: code planted there would run unconfined later'})`
      : ''
  return `${what}; to allow it: ${allow}${why}`
}

/** What a person reads after a run: the denial lines, then a line per closed class the run met. */
export function factLines(result: ShellRunResult, policy: SandboxExecutionPolicy, run?: DeniedRun): string[] {
  const denial = denialLine(result, policy, run)
  return [...(denial === undefined ? [] : [denial]), ...closedClassLines(result)]
}

/** A line per class the backend closes whole that the run met: what it met, and the flags that open it. */
export function closedClassLines(result: ShellRunResult): string[] {
  const backend = result.sandbox?.backend ?? 'the sandbox'
  return (result.sandbox?.closedClasses ?? []).map(
    (c) =>
      `cordon: ${backend} closes ${c.class.replaceAll('-', ' ')} whole: ${c.evidence}; to allow it: ${c.remedy} (or --mode danger-full-access)`,
  )
}

/** A sandbox stand-in for danger-full-access: the executor never asks it (no probe, no backend). */
const UNCONFINED: ShellSandbox = {
  confine() {
    throw new Error('unreachable: danger-full-access never asks a backend')
  },
}

/** Writes a run's output to `io` as it comes, through the escape filter where a stream is a terminal. */
function relayTo(io: TerminalIo, filter: boolean): (chunk: string, stream: 'stdout' | 'stderr') => void {
  // Each stream (and its filter) is made on its first chunk: a command that prints nothing costs none.
  const filters: Partial<Record<'stdout' | 'stderr', ((text: string) => string) | null>> = {}
  return (chunk, stream) => {
    const out = stream === 'stdout' ? io.stdout : io.stderr
    let f = filters[stream]
    if (f === undefined) {
      f = outputFilterFor(out as { isTTY?: boolean }, !filter) ?? null
      filters[stream] = f
    }
    out.write(f ? f(chunk) : chunk)
  }
}

/**
 * Whether fd 0 holds data (a pipe, a file, a socket) rather than a device: /dev/null or a terminal
 * stays the command's /dev/null, never a pipe (ripgrep, for one, searches a piped stdin instead of
 * the tree, as it would not unconfined).
 */
function stdinHoldsData(): boolean {
  try {
    const st = fstatSync(0)
    return st.isFIFO() || st.isFile() || st.isSocket()
  } catch {
    return false
  }
}

/**
 * Runs `spec` with cordon's own stdin forwarded when it is a pipe or a file, read as the command
 * reads it, and let go of once the run is over. A terminal or /dev/null stays cordon's (the
 * command reads /dev/null, as ever; `--tty` relays a terminal).
 */
async function runForwardingStdin(
  executor: LocalShellExecutor,
  spec: ShellExecSpec,
  io: TerminalIo,
  onOutput: ((chunk: string, stream: 'stdout' | 'stderr') => void) | undefined,
): Promise<ShellRunResult> {
  const given = io.stdin
  const data = given === process.stdin ? stdinHoldsData() : given.isTTY !== true
  const stdin = data ? (given as Readable) : undefined
  try {
    return await executor.run(spec, { ...(onOutput ? { onOutput } : {}), ...(stdin ? { stdin } : {}) })
  } finally {
    stdin?.destroy()
  }
}

/** How long a CLI run's spill file is kept (the sweep at a later start removes older ones). */
const CLI_SPILL_MAX_AGE_MS = 3 * 24 * 60 * 60 * 1000

/** The CLI's spill dir after sweeping its old files; undefined when there is no private dir. */
function cliSpillDir(): string | undefined {
  try {
    const dir = privateSubdir('cli-spill')
    sweepOldFiles(dir, CLI_SPILL_MAX_AGE_MS)
    return dir
  } catch {
    return undefined
  }
}

/** The sandbox of one `run`: one run per process, so a bwrap per run (an instance would buy nothing: bench/RESULTS.md). */
function oneShotSandbox(flags: ReturnType<typeof policyFrom>): LocalSandboxOptions {
  return {
    probeCache: flags.probeCache,
    ...(flags.backends ? { backends: flags.backends } : {}),
    residentInstances: false,
    config: flags.config,
  }
}

/** The lines a person reads after a run, on stderr: enforcement, denials, the scrub, a timeout, a one-word hint. */
function reportLines(
  result: ShellRunResult,
  policy: SandboxExecutionPolicy,
  spec: ShellExecSpec,
  words: string[],
): string[] {
  const lines: string[] = []
  if (result.sandbox?.enforcement === 'partial') {
    lines.push(
      `cordon: note: ${result.sandbox.mode} is enforced only partially by ${result.sandbox.backend} here (see \`cordon probe\`); --require-full refuses such runs`,
    )
  }
  lines.push(...factLines(result, policy, { command: spec.command, cwd: spec.workdir }))
  const removed = removedEnvLine(result)
  if (removed) lines.push(removed)
  if (result.timedOut) lines.push(`cordon: timed out after ${result.timeoutMs}ms`)
  const hint = oneWordHint(words, result.exitCode)
  if (hint) lines.push(hint)
  return lines
}

/** Runs the `run` verb; returns the exit status. */
export async function runVerb(args: string[], io: TerminalIo): Promise<number> {
  const { values, positionals } = parseWith(
    args,
    {
      command: { type: 'string', short: 'c' },
      timeout: { type: 'string' },
      tty: { type: 'boolean' },
      'raw-output': { type: 'boolean' },
    },
    { command: true },
  )
  if (values.help) {
    io.stdout.write(RUN_HELP)
    return 0
  }
  const command = runCommandFrom(values.command, positionals)
  const timeoutMs = timeoutFrom(values.timeout)
  const cwd = workingDirectory(values.root)
  const flags = policyFrom(values, cwd)
  if (values.tty) {
    if (flags.json) throw new UsageError('--tty: a terminal has no JSON result; drop --json')
    const rawOutput = values['raw-output'] === true
    const argv = ['bash', '-c', command]
    return runInTerminal({ argv, flags, timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS, banner: false, rawOutput, cwd }, io)
  }
  const confined = flags.policy.mode !== 'danger-full-access'
  const sandbox = confined ? await LocalSandbox.create(oneShotSandbox(flags)) : UNCONFINED
  // Spill files outlive this process (the JSON result names them): in the private cli-spill dir,
  // swept by age at a later start.
  const spillDir = cliSpillDir()
  const executor = new LocalShellExecutor({
    cwd,
    ...(spillDir === undefined ? {} : { spillDir }),
    workspaceRoot: flags.policy.workspaceRoot,
    environment: flags.environment,
    sandbox,
    ...(timeoutMs === undefined ? {} : { timeoutMs, maxTimeoutMs: Math.max(timeoutMs, MAX_TIMEOUT_MS) }),
  })
  // Ctrl-C (or a TERM to cordon) ends the command's tree, then cordon reports like a shell.
  const interrupt = new AbortController()
  const onSignal = () => interrupt.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const spec = executor.resolve({
      command,
      sandboxPolicy: flags.policy,
      signal: interrupt.signal,
      env: keptEnv(flags.keepEnv),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    })
    const relay = flags.json ? undefined : relayTo(io, values['raw-output'] !== true)
    const result = await runForwardingStdin(executor, spec, io, relay)
    if (flags.json) io.stdout.write(`${JSON.stringify(result)}\n`)
    else for (const line of reportLines(result, flags.policy, spec, positionals)) io.stderr.write(`${line}\n`)
    return exitStatusOf(result)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await executor.dispose()
    if (sandbox instanceof LocalSandbox) await sandbox.dispose()
  }
}
