/**
 * `cordon shell` (and `cordon run --tty`): a program on a pty that cordon allocates, relayed to
 * the person's terminal. The person's own tty is never handed to the program: cordon puts it in
 * raw mode and copies bytes both ways, so Ctrl-C, Ctrl-Z and every other key reach the pty's line
 * discipline, which signals the program's foreground job, not cordon. A resize of the person's
 * terminal (SIGWINCH, seen as the tty stream's 'resize') is forwarded; the exit status is the
 * program's (128+N for signal N).
 *
 * Confinement goes through one call, `LocalSandbox.confineTerminal(spec, policy)` → `{ spec,
 * backend, enforcement }`: the program runs below `cordon-exec init --terminal` (Landlock), or
 * inside bwrap below it (bubblewrap), confined exactly like a piped command under the same policy;
 * when nothing can enforce the mode, SANDBOX_UNAVAILABLE (exit 125). `danger-full-access` asks no
 * sandbox and runs the program as the pty's session leader.
 */
import { constants as osConstants } from 'node:os'
import type { SandboxExecutionPolicy } from '../policy/vocabulary.js'
import type { ConfinedTerminal } from '../sandbox/confine-terminal.js'
import { LocalSandbox } from '../sandbox/local-sandbox.js'
import { LocalSubprocessRuntime } from '../subprocess/runtime.js'
import type { SubprocessOutcome, SubprocessTerminalHandle, SubprocessTerminalSpawnSpec } from '../subprocess/types.js'
import { outputProcessingOff } from './output-processing.js'
import { keptEnv, POLICY_HELP, parseWith, policyFrom, type PolicyFlags } from './policy-options.js'
import { outputFilterFor } from './terminal-filter.js'
import { refuseNulWords } from './invocation/command.js'
import { workingDirectory } from './invocation/cwd.js'
import { EXIT_TIMED_OUT, UsageError } from './usage-error.js'

/** `cordon shell --help`. */
export const SHELL_HELP = `Usage: cordon shell [options] [-- PROGRAM ARGS...]

Runs an interactive program (default: $SHELL, else bash) on a terminal that cordon allocates,
relayed to yours: raw mode, resizes forwarded, Ctrl-C to the program's foreground job. A line on
stderr says the mode, root and backend. Exit status: the program's; 128+N when killed by signal N;
125 when cordon could not start it.

The program is confined like \`cordon run\` under the same options (read-only by default); a
confined mode that no backend can enforce here exits 125 (SANDBOX_UNAVAILABLE).

Options:
${POLICY_HELP.split('\n')
  .filter((line) => !line.includes('--json'))
  .join('\n')}
      --raw-output       pass every escape sequence to your terminal (by default clipboard writes,
                         title changes, terminal queries and DCS/APC strings are dropped)
  -h, --help             this help
`

/** Grace between the steps of a terminal's teardown (TERM → KILL) when cordon ends it. */
const TERMINAL_GRACE_MS = 2000

/** What confines terminal specs (LocalSandbox, or a stand-in that asks no sandbox). */
export interface TerminalSandbox {
  confineTerminal(spec: SubprocessTerminalSpawnSpec, policy: SandboxExecutionPolicy): ConfinedTerminal
  dispose(): Promise<void>
}

/** danger-full-access: the spec runs as given, no sandbox is asked. */
const UNCONFINED: TerminalSandbox = {
  confineTerminal: (spec) => ({ spec, backend: 'none' }),
  dispose: async () => {},
}

/** The sandbox for a terminal under `flags`: none for danger-full-access, else a probed LocalSandbox. */
async function terminalSandbox(flags: PolicyFlags): Promise<TerminalSandbox> {
  if (flags.policy.mode === 'danger-full-access') return UNCONFINED
  return LocalSandbox.create({
    probeCache: flags.probeCache,
    ...(flags.backends ? { backends: flags.backends } : {}),
    config: flags.config,
  })
}

/** The person's side of the relay: a tty stdin (raw mode) and a tty stdout (its size), or plain streams. */
export interface TerminalIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number }
  stderr: NodeJS.WritableStream
}

/** The exit status a shell would report for a terminal's outcome. */
export function terminalExitStatus(outcome: SubprocessOutcome): number {
  if (outcome.signal !== null) return 128 + (osConstants.signals[outcome.signal] ?? 0)
  return outcome.exitCode ?? 1
}

/** The person's terminal size, 80×24 when stdout is not a terminal. */
function sizeOf(io: TerminalIo): { cols: number; rows: number } {
  const cols = io.stdout.isTTY ? io.stdout.columns : undefined
  const rows = io.stdout.isTTY ? io.stdout.rows : undefined
  return { cols: cols && cols > 0 ? cols : 80, rows: rows && rows > 0 ? rows : 24 }
}

/** The signals that end cordon's relay: the session is torn down and cordon exits 128+N. */
const ENDING_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const

/**
 * Relays `io` to `terminal` until the terminal's output ends; then sweeps what is left of its
 * session. Returns the exit status: the program's, 124 after `timeoutMs`, 128+N when cordon
 * itself got signal N.
 */
export async function relayTerminal(
  terminal: SubprocessTerminalHandle,
  io: TerminalIo,
  options: { timeoutMs?: number | undefined; filter?: ((text: string) => string) | undefined } = {},
): Promise<number> {
  // Through the iterator, so a slow terminal on the person's side pauses the program (the
  // iterator's high-water mark) instead of piling output up in memory.
  const output = (async () => {
    for await (const text of terminal) {
      if (!io.stdout.write(options.filter ? options.filter(text) : text))
        await new Promise((resolve) => io.stdout.once('drain', resolve))
    }
  })()
  const raw = io.stdin.isTTY === true && typeof io.stdin.setRawMode === 'function'
  const restore = () => {
    if (raw) io.stdin.setRawMode?.(false) // libuv restores the termios it saved, output processing included
  }
  if (raw) {
    io.stdin.setRawMode?.(true)
    // libuv's raw mode keeps ONLCR, which would turn the pty's "\r\n" into "\r\r\n" and every bare
    // "\n" a full-screen program sends into "\r\n": the relay must be byte-exact.
    if (io.stdin === process.stdin) {
      const notice = outputProcessingOff(0)
      if (notice !== undefined) io.stderr.write(`${notice}\n`)
    }
  }
  process.once('exit', restore)
  const onInput = (chunk: Buffer | string) => terminal.write(chunk)
  // A pipe's end is the person's EOF: ^D at the start of a line, as a terminal would send it.
  const onEnd = () => terminal.write('\x04')
  io.stdin.on('data', onInput)
  io.stdin.on('end', onEnd)
  io.stdin.resume()
  const onResize = () => {
    const { cols, rows } = sizeOf(io)
    terminal.resize(cols, rows)
  }
  const stdoutEvents = io.stdout as unknown as NodeJS.EventEmitter
  if (io.stdout.isTTY) stdoutEvents.on('resize', onResize)

  let ended: number | undefined
  const end = (status: number) => {
    ended ??= status
    void terminal.terminate().catch(() => undefined) // the final sweep below reports failures
  }
  const handlers = ENDING_SIGNALS.map((signal) => {
    const handler = () => end(128 + osConstants.signals[signal])
    process.on(signal, handler)
    return [signal, handler] as const
  })
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => end(EXIT_TIMED_OUT), options.timeoutMs)
  try {
    const outcome = await terminal.done
    await output
    // Jobs the program left running (nohup, disown) end with it: cordon leaves nothing behind.
    await terminal.terminate().catch((error: unknown) => {
      io.stderr.write(`cordon: ${error instanceof Error ? error.message : String(error)}\n`)
    })
    return ended ?? terminalExitStatus(outcome)
  } finally {
    if (timer) clearTimeout(timer)
    for (const [signal, handler] of handlers) process.off(signal, handler)
    stdoutEvents.off('resize', onResize)
    io.stdin.off('data', onInput)
    io.stdin.off('end', onEnd)
    io.stdin.pause()
    restore()
    process.off('exit', restore)
  }
}

/** What a terminal run needs: the argv, the policy flags, an optional timeout, and whether to print the banner. */
export interface TerminalRun {
  argv: readonly string[]
  flags: PolicyFlags
  timeoutMs?: number | undefined
  banner: boolean
  /** Pass every escape sequence to the person's terminal (`--raw-output`); default: filtered. */
  rawOutput?: boolean | undefined
  /** Where the program starts; default the current directory. */
  cwd?: string | undefined
}

/** Runs `run.argv` on a cordon terminal relayed to `io`, confined by policy; returns the exit status. */
export async function runInTerminal(run: TerminalRun, io: TerminalIo): Promise<number> {
  const sandbox = await terminalSandbox(run.flags)
  const runtime = new LocalSubprocessRuntime()
  try {
    const confined = sandbox.confineTerminal(
      {
        argv: run.argv,
        cwd: run.cwd ?? process.cwd(),
        env: keptEnv(run.flags.keepEnv),
        ...sizeOf(io),
        graceMs: TERMINAL_GRACE_MS,
      },
      run.flags.policy,
    )
    if (run.banner) {
      const how = confined.backend === 'none' ? 'unconfined' : `enforcement ${confined.enforcement ?? 'unknown'}`
      io.stderr.write(
        `cordon shell: mode ${run.flags.policy.mode}, root ${run.flags.policy.workspaceRoot}, backend ${confined.backend} (${how})\n`,
      )
    }
    const terminal = await runtime.spawnTerminal(confined.spec)
    const filter = outputFilterFor(io.stdout, run.rawOutput === true)
    return await relayTerminal(terminal, io, { timeoutMs: run.timeoutMs, filter })
  } finally {
    await runtime.dispose()
    await sandbox.dispose()
  }
}

/** Runs the `shell` verb; returns the exit status. */
export async function shellVerb(args: string[], io: TerminalIo): Promise<number> {
  const { values, positionals } = parseWith(args, { 'raw-output': { type: 'boolean' } }, { command: true })
  if (values.help) {
    io.stdout.write(SHELL_HELP)
    return 0
  }
  if (values.json) throw new UsageError('--json does not apply to an interactive terminal')
  refuseNulWords(positionals, "the program's word")
  const cwd = workingDirectory(values.root)
  const flags = policyFrom(values, cwd)
  const argv = positionals.length > 0 ? positionals : [process.env.SHELL || 'bash']
  return runInTerminal({ argv, flags, banner: true, rawOutput: values['raw-output'] === true, cwd }, io)
}
