/**
 * What the sandbox refused in a run, read from its output as facts: a message a real tool prints
 * for a refused operation (src/sandbox/denials/message-shapes.ts), the path it names, that path
 * outside what the policy lets the command write (or protected, or a write at a hidden place), and
 * a host check that the same uid could have done it without the sandbox (so EACCES from file
 * permissions, or a program printing the words about a place it could never write, is not the
 * sandbox's). A refusal that names no path is not counted: we never guess. Refusals are reported
 * whatever the exit; a run is `denied` only when it then failed.
 */
import { DENIAL_CODES, DENIAL_SIGNATURES } from '../confinement/denial-text.js'
import { refusedWrite } from './hidden-writes.js'
import { isWithin, landingPath } from './line-paths.js'
import { type Recognised, recognise, type ShapeContext } from './message-shapes.js'
import { type CommandUser, notExecutable, permittedUnconfined } from './permissions.js'
import { placesNaming, placesOfCommands } from './shell-text.js'

/** What the classifier needs to know about one finished run. */
export interface DenialInput {
  backend: string
  exitCode: number | null
  runnerFailed: boolean
  stderr: string
  /** The command's working directory (relative paths in messages resolve against it). */
  cwd: string
  /** Canonical paths the policy lets the command write (roots, extra roots, temp dir, devices). */
  writable: readonly string[]
  /** The command text, when known: its `cd DIR`, `-C DIR` and nested shells place relative paths. */
  command?: string | undefined
  /** The command's stdout tail: some tools (node's test runner, pytest's warnings) print there. */
  stdout?: string | undefined
  /** Canonical hidden paths: a refused read there is the secrets class; a refused write is a denial. */
  hidden?: readonly string[] | undefined
  /** Where each failed command of the run's shell ran, when the shell logged it (src/shell/failure-log.ts). */
  failures?: ReadonlyArray<{ cwd: string; command: string }> | undefined
  /** Protected paths inside writable roots (read-only binds): a refusal there is the sandbox's. */
  protectedPaths?: readonly string[] | undefined
  /**
   * Whom the command runs as, when its permission checks differ from the host's: a root host's
   * command has no capability (no DAC override), a command run as the workspace owner is theirs.
   */
  commandUser?: CommandUser | undefined
}

/** The classification: what the sandbox refused, and whether the (failed) run was denied. */
export interface DenialFacts {
  /** The run failed (nonzero exit) and the sandbox refused something in it. */
  denied: boolean
  /** The refused paths of a denied run (empty otherwise). */
  deniedPaths: string[]
  /** Every path whose write the sandbox refused, whatever the exit. */
  refusedPaths: string[]
}

const PSEUDO = /^\/(proc|sys)(\/|$)/

/**
 * Where a message's relative `token` is: where the words naming it ran, in the failed commands the
 * shell logged, else in the command text (a run that exits 0 logs none); else where the logged
 * commands ran, else every place the text ran a command; the cwd with neither.
 */
function basesOf(token: string, input: DenialInput): string[] {
  const logged = input.failures ?? []
  const text = input.command ? [{ cwd: input.cwd, command: input.command }] : []
  for (const runs of [logged, text]) {
    const naming = runs.length > 0 ? placesNaming(token, runs) : undefined
    if (naming !== undefined) return naming
  }
  const runs = logged.length > 0 ? logged : text
  return runs.length > 0 ? placesOfCommands(runs) : [input.cwd]
}

/** Classifies one finished run; nothing for a runner failure or a backend without signatures. */
export function classifyDenial(input: DenialInput): DenialFacts {
  const signatures = DENIAL_SIGNATURES[input.backend]
  if (signatures === undefined || input.runnerFailed) return { denied: false, deniedPaths: [], refusedPaths: [] }
  const ctx: ShapeContext = {
    backend: input.backend,
    signatures,
    codes: DENIAL_CODES[input.backend] ?? [],
    runs: [...(input.failures ?? []), ...(input.command ? [{ cwd: input.cwd, command: input.command }] : [])],
    basesOf: (token) => basesOf(token, input),
  }
  const refused: string[] = []
  let refusedWithoutPath = false
  const lines = [...input.stderr.split(/\r?\n/), ...(input.stdout ?? '').split(/\r?\n/)]
  for (let i = 0; i < lines.length; i++) {
    const found = recognise(lines, i, ctx)
    if (found !== undefined) refusedWithoutPath = judge(found, input, refused) || refusedWithoutPath
  }
  const failed = input.exitCode !== null && input.exitCode !== 0
  const denied = failed && (refused.length > 0 || refusedWithoutPath)
  return { denied, deniedPaths: denied ? [...refused] : [], refusedPaths: refused }
}

/**
 * Adds the paths of a recognised refusal the sandbox made to `refused`; true when it made one
 * whose path stays unknown (every directory the command could have run in was refused).
 */
function judge(found: Recognised, input: DenialInput, refused: string[]): boolean {
  let withoutPath = false
  for (const n of found.named) {
    if ('path' in n) {
      const path = landingPath(n.path)
      if (!refused.includes(path) && refusedBySandbox(path, found.operation, input, found.write)) refused.push(path)
    } else if (n.candidates.every((c) => refusedBySandbox(landingPath(c), found.operation, input, found.write))) {
      withoutPath = true
    }
  }
  return withoutPath
}

/**
 * Whether a refusal at `path` was the sandbox's: a protected path, a write at a hidden place, or a
 * path outside what the policy lets the command write; and ordinary permissions allowed it.
 */
function refusedBySandbox(path: string, operation: string, input: DenialInput, write?: boolean): boolean {
  // A pseudo filesystem's refusals are the kernel's own rules (ptrace, sysfs modes), never a root's to widen.
  if (PSEUDO.test(path)) return false
  const isProtected = input.protectedPaths?.some((p) => isWithin(path, p)) === true
  // EBUSY is the sandbox's only on a protected path (a mount point); anywhere else it is ordinary.
  if (!isProtected && /device or resource busy/i.test(operation)) return false
  const isHidden = !isProtected && input.hidden?.some((h) => isWithin(path, h)) === true
  // A hidden place refuses reads: that is the secrets class, and no writable root would help. Its writes are denials.
  if (isHidden && !refusedWrite(path, operation, write)) return false
  if (!isProtected && !isHidden && input.writable.some((root) => isWithin(path, root))) return false
  // Landlock grants read and execute everywhere: a refused exec is the file's own mode.
  if (notExecutable(path, input.exitCode)) return false
  return permittedUnconfined(path, operation, input.commandUser)
}
