/**
 * The exit-status contract between the rendered text a model reads and the structured facts:
 * `renderResult` writes the bodies and markers, `parseExitStatus` reads the exit marker back.
 *
 * Layout: stdout (+ truncation note), `[stderr]` section (+ note), or `(no output)`; then,
 * each after a newline: the denial markers (+ hints: files, then network), a closed-class marker per class
 * the run met, `[timed out after Nms]`, and last the
 * exit marker (`[killed by signal: SIG]`, else `[exit code: N]` for a nonzero code).
 *
 * Round-trip rule: `parseExitStatus` consumes only a final `\n[killed by signal: X]` or
 * `\n[exit code: N]` line. When a clean exit's text already ends in such a line (real output
 * that looks like a marker), the renderer appends an explicit `\n[exit code: 0]`, so the
 * parser consumes that instead and the look-alike stays in the body.
 */
import { displayLine } from '../policy/display-text.js'
import type { NetworkFacts } from '../policy/network/facts.js'
import { moreText, refusalText, shownRefusals } from '../policy/network/refusals.js'
import type { ClosedClassFact, SandboxMode } from '../policy/vocabulary.js'
import type { CollectedOutput, ShellRunResult, ShellSandboxInfo } from './types.js'

/** The body shown when neither stream produced anything. */
export const NO_OUTPUT = '(no output)'

/** The line that opens the stderr section. */
export const STDERR_HEADER = '[stderr]'

/** The hint shown after a denial when escalation is advertised (dsh-semantics §3.3). */
export const ESCALATION_HINT =
  '[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]'

/** The hint shown after a network denial when more hosts can be asked for. */
export const NETWORK_HINT =
  '[sandbox: to reach a refused host, retry this exact command once with additional_hosts (only the hosts it needs) + justification; the approval prompt asks the user. A host in the deny list stays refused.]'

/** `[sandbox: network access refused by the allow-list: host:port: why; …; and N more]`, every host escaped. */
export function networkDenialMarker(network: NetworkFacts | undefined): string {
  const { shown, more } = shownRefusals(network)
  if (shown.length === 0 && more === 0)
    return '[sandbox: network access refused by the allow-list (which host is unknown)]'
  const rest = moreText(more)
  const items = [...shown.map(refusalText), ...(rest === undefined ? [] : [rest])]
  return `[sandbox: network access refused by the allow-list: ${items.join('; ')}]`
}

/** `[exit code: N]`. */
export function exitCodeMarker(code: number): string {
  return `[exit code: ${code}]`
}

/** `[killed by signal: SIG]`. */
export function signalMarker(signal: string): string {
  return `[killed by signal: ${signal}]`
}

/** `[timed out after Nms]`. */
export function timeoutMarker(timeoutMs: number): string {
  return `[timed out after ${timeoutMs}ms]`
}

/** `[sandbox: file access denied under <mode> mode]`. */
export function denialMarker(mode: SandboxMode): string {
  return `[sandbox: file access denied under ${mode} mode]`
}

/** How many refused paths a marker names before it says how many more. */
const SHOWN_REFUSALS = 5

/** `[sandbox: writes refused under <mode> mode though the command did not fail on them: P, …]`, every path escaped. */
export function refusalMarker(mode: SandboxMode, paths: readonly string[]): string {
  const shown = paths.slice(0, SHOWN_REFUSALS).map((p) => displayLine(p))
  const more = paths.length > SHOWN_REFUSALS ? `, and ${paths.length - SHOWN_REFUSALS} more` : ''
  return `[sandbox: writes refused under ${mode} mode though the command did not fail on them (they did not happen): ${shown.join(', ')}${more}]`
}

/** `[sandbox: CLASS is closed whole here — what the run met; the flags that open it]`: the refusal was the sandbox's, not the command's. */
export function closedClassMarker(c: ClosedClassFact): string {
  return `[sandbox: ${c.class} is closed whole in this sandbox — ${c.evidence}; ${c.remedy} opens it]`
}

/** The marker for a background job whose sandbox runner failed before the command ran. */
export function runnerFailureMarker(mode: SandboxMode): string {
  return `[sandbox: the sandbox runner itself failed under ${mode} mode — the command did not run; this is a sandbox problem, not a command failure]`
}

/** `[output truncated; full output: <spillPath or (unavailable)>]`. */
export function truncationNote(spillPath: string | undefined): string {
  return `[output truncated; full output: ${spillPath ?? '(unavailable)'}]`
}

/** The exit status read back from rendered text. */
export interface ParsedExitStatus {
  /** The text with the consumed exit marker line removed (timeout and sandbox markers stay). */
  body: string
  /** The exit code; null when a signal ended the process; 0 when no marker is present. */
  exitCode: number | null
  /** The terminating signal, when the text ends in a signal marker. */
  signal: NodeJS.Signals | null
}

/** Options for renderResult. */
export interface RenderOptions {
  /** Append the escalation hint after a denial marker: `true` for the standard text, or a custom line. */
  escalationHint?: boolean | string | undefined
  /** Append the hint to ask for hosts after a network denial marker: `true` for NETWORK_HINT, or a custom line. */
  networkHint?: boolean | string | undefined
}

/** A hint option as its line: `true` the standard one, a string itself, else none. */
function hintLine(hint: boolean | string | undefined, standard: string): string[] {
  if (hint === true) return [standard]
  return typeof hint === 'string' && hint !== '' ? [hint] : []
}

/**
 * The marker lines of a denied run: the file denial's (facts without `deniedFor` are a file
 * denial) and the network's, each followed by its hint when asked for; for a run that did not fail,
 * the writes the sandbox refused all the same; none when nothing was refused.
 */
export function denialLines(facts: ShellSandboxInfo | undefined, options: RenderOptions = {}): string[] {
  // A run that did not fail can still have lost writes: said with the paths, and the same hint.
  if (facts?.denied !== true && (facts?.refusedPaths?.length ?? 0) > 0)
    return [refusalMarker(facts!.mode, facts!.refusedPaths!), ...hintLine(options.escalationHint, ESCALATION_HINT)]
  if (facts?.denied !== true) return []
  const lines: string[] = []
  if (facts.deniedFor === undefined || facts.deniedFor.includes('files'))
    lines.push(denialMarker(facts.mode), ...hintLine(options.escalationHint, ESCALATION_HINT))
  if (facts.deniedFor?.includes('network'))
    lines.push(networkDenialMarker(facts.network), ...hintLine(options.networkHint, NETWORK_HINT))
  return lines
}

const SIGNAL_LINE = /\n\[killed by signal: ([^\]\n]+)\]$/
const EXIT_LINE = /\n\[exit code: (-?\d+)\]$/

/** Renders a foreground result as the text a model reads; `parseExitStatus` inverts its exit status exactly. */
export function renderResult(result: ShellRunResult, options: RenderOptions = {}): string {
  let text = renderBody(result.stdout, result.stderr)
  for (const line of denialLines(result.sandbox, options)) text += `\n${line}`
  for (const c of result.sandbox?.closedClasses ?? []) text += `\n${closedClassMarker(c)}`
  if (result.timedOut) text += `\n${timeoutMarker(result.timeoutMs)}`
  return appendExitStatus(text, { exitCode: result.exitCode, signal: result.signal })
}

/** The stream bodies: stdout, the `[stderr]` section, truncation notes, or `(no output)`. */
export function renderBody(stdout: CollectedOutput, stderr: CollectedOutput): string {
  let body = streamText(stdout)
  const err = streamText(stderr)
  if (err !== '') {
    if (body !== '' && !body.endsWith('\n')) body += '\n'
    body += `${STDERR_HEADER}\n${err}`
  }
  return body === '' ? NO_OUTPUT : body
}

function streamText(output: CollectedOutput): string {
  return output.truncated ? `${output.text}\n${truncationNote(output.spillPath)}` : output.text
}

/**
 * Appends the exit marker for `status` to `body` (none for a clean exit unless `body`
 * already ends in a marker-like line); `parseExitStatus` of the result gives back exactly
 * `body` and the status (signal first; a signal means exitCode null).
 */
export function appendExitStatus(
  body: string,
  status: { exitCode: number | null; signal: NodeJS.Signals | null },
): string {
  if (status.signal !== null) return `${body}\n${signalMarker(status.signal)}`
  if (status.exitCode !== null && status.exitCode !== 0) return `${body}\n${exitCodeMarker(status.exitCode)}`
  return endsInExitMarker(body) ? `${body}\n${exitCodeMarker(0)}` : body
}

/** Whether `text` ends in a line `parseExitStatus` would consume. */
export function endsInExitMarker(text: string): boolean {
  return SIGNAL_LINE.test(text) || EXIT_LINE.test(text)
}

/**
 * Reads the exit status from rendered text: a final signal line first, else a final exit
 * code line, else exit 0; removes only the consumed line.
 */
export function parseExitStatus(text: string): ParsedExitStatus {
  const signal = SIGNAL_LINE.exec(text)
  if (signal !== null) {
    return { body: text.slice(0, signal.index), exitCode: null, signal: signal[1] as NodeJS.Signals }
  }
  const exit = EXIT_LINE.exec(text)
  if (exit !== null) {
    return { body: text.slice(0, exit.index), exitCode: Number(exit[1]), signal: null }
  }
  return { body: text, exitCode: 0, signal: null }
}
