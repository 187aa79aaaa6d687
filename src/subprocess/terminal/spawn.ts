/**
 * spawnTerminal on this host (seed 003): validates the request, loads node-pty, checks the
 * program and directory the way `spawn` would, hands a confined terminal its ruleset, and forks
 * the program as the session leader of a new pty (forkpty: its controlling terminal is the pty's
 * slave), behind LocalTerminal.
 */
import { existsSync } from 'node:fs'
import { SpawnError } from '../../policy/errors.js'
import { envToArray, mergeEnv, scrubbedParentEnv } from '../env/scrub.js'
import { awaitListener, PROXY_FD_PLACEHOLDER, proxySocket } from '../launcher/proxy-listener.js'
import { loadNative, type NativeAddon } from '../native.js'
import { validateTerminalSpec } from '../spec/terminal-schema.js'
import type { SubprocessTerminalSpawnSpec } from '../types.js'
import { TERMINAL_PROC_REMEDY, TerminalUnavailableError } from './errors.js'
import { LocalTerminal } from './local-terminal.js'
import { checkProgram } from './program-check.js'
import type { PtyLoader, PtyModule, PtyProcess } from './pty.js'
import { handOverRuleset } from './ruleset-handover.js'

/** The terminal type when the environment names none (the reference's pty name). */
export const DEFAULT_TERM = 'dumb'

/** An AbortError (Node's `ABORT_ERR`) carrying the signal's reason. */
function abortError(prefix: string, signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  const error = new Error(
    `${prefix}: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`,
    reason === undefined ? undefined : { cause: reason },
  )
  return Object.assign(error, { name: 'AbortError', code: 'ABORT_ERR' })
}

/** The program's environment: exactly `spawn`'s (scrub, then the overrides), minus unrepresentable entries. */
function terminalEnv(overrides: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>
  for (const entry of envToArray(mergeEnv(scrubbedParentEnv(), overrides))) {
    const eq = entry.indexOf('=')
    env[entry.slice(0, eq)] = entry.slice(eq + 1)
  }
  return env
}

/** What spawnLocalTerminal needs from its runtime. */
export interface LocalTerminalHooks {
  /** Loads node-pty (or a stand-in module with its shape). */
  loadPty: PtyLoader
  /** Runs synchronously right before the fork; throwing refuses the allocation (a disposed runtime). */
  beforeFork?: () => void
  /** Runs synchronously right after the fork, with the live handle (the runtime takes ownership). */
  afterFork?: (terminal: LocalTerminal) => void
  /** Called once the top process is reaped and no member of the session is left. */
  onGone?: (terminal: LocalTerminal) => void
}

/** Forks `argv` on a new pty; forkpty(3) failing (no pty left, fork refused) is a SpawnError at `clone`. */
function forkPty(
  pty: PtyModule,
  argv: readonly string[],
  spec: SubprocessTerminalSpawnSpec,
  env: Record<string, string>,
): PtyProcess {
  try {
    return pty.spawn(argv[0]!, argv.slice(1), {
      name: env.TERM ?? DEFAULT_TERM,
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env,
      encoding: null,
    })
  } catch (error) {
    // node-pty says so without an errno.
    throw new SpawnError({
      stage: 'clone',
      errno: 0,
      path: spec.argv[0],
      detail: 'node-pty could not fork a terminal',
      cause: error,
    })
  }
}

/** Throws unless this host can observe a terminal session (/proc). */
function assertObservable(): void {
  if (!existsSync('/proc/self/stat')) {
    throw new TerminalUnavailableError(new Error(`no /proc on ${process.platform}`), {
      what: 'this provider cannot observe a terminal session here',
      remedy: TERMINAL_PROC_REMEDY,
    })
  }
}

/**
 * Under a network allow-list: a socket pair for the launcher's listener, its child end made
 * inheritable for the next fork and named in the argv in place of the placeholder; undefined
 * without one. Refuses (stage namespace) an argv that does not ask for it.
 */
function handOverProxySocket(
  spec: SubprocessTerminalSpawnSpec,
  argv: readonly string[],
  native: NativeAddon,
): { hostEnd: number; childEnd: number; argv: string[] } | undefined {
  if (spec.network === undefined) return undefined
  const suffix = `:${PROXY_FD_PLACEHOLDER}`
  const at = argv.findIndex((a, i) => a.endsWith(suffix) && argv[i - 1] === '--proxy-listener')
  if (at < 0)
    throw new SpawnError({ stage: 'namespace', errno: 22, detail: "the terminal's argv does not ask for its listener" })
  const [hostEnd, childEnd] = proxySocket()
  const rc = native.setCloexec(childEnd, false)
  if (rc !== 0) {
    native.closeFd(hostEnd)
    native.closeFd(childEnd)
    throw new SpawnError({
      stage: 'namespace',
      errno: -rc,
      detail: "the terminal's listener socket cannot be handed over",
    })
  }
  const out = [...argv]
  out[at] = `${out[at]!.slice(0, -PROXY_FD_PLACEHOLDER.length)}${childEnd}`
  return { hostEnd, childEnd, argv: out }
}

/** Validates, loads node-pty, checks the program and cwd, then forks the terminal. */
export async function spawnLocalTerminal(
  spec: SubprocessTerminalSpawnSpec,
  hooks: LocalTerminalHooks,
): Promise<LocalTerminal> {
  validateTerminalSpec(spec)
  if (spec.signal?.aborted) throw abortError('aborted before spawn', spec.signal)
  assertObservable()
  const env = terminalEnv(spec.env)
  const pty = await hooks.loadPty()
  if (spec.signal?.aborted) throw abortError('terminal allocation aborted', spec.signal)
  checkProgram(spec, env)
  const native = loadNative() // before the fork: a missing addon refuses the allocation
  const handed = handOverRuleset(spec, native)
  let proxy: { hostEnd: number; childEnd: number; argv: string[] } | undefined
  let proc: PtyProcess
  try {
    proxy = handOverProxySocket(spec, handed?.argv ?? spec.argv, native)
    hooks.beforeFork?.()
    proc = forkPty(pty, proxy?.argv ?? handed?.argv ?? spec.argv, spec, env)
  } catch (error) {
    if (proxy !== undefined) native.closeFd(proxy.hostEnd)
    throw error
  } finally {
    // node-pty forked synchronously: the launcher holds its copies now, the host needs none.
    if (handed !== undefined) native.closeFd(handed.fd)
    if (proxy !== undefined) native.closeFd(proxy.childEnd)
  }
  // node-pty opens masters without close-on-exec: every later child of the host (the next
  // terminal's program above all, which node-pty forks without closing anything) would hold this
  // terminal's master, reading its input and keeping it from hanging up.
  if (typeof proc.fd === 'number') native.setCloexec(proc.fd)
  const terminal = new LocalTerminal(
    proc,
    { graceMs: spec.graceMs, launcher: spec.launcher === true, aftermath: spec.aftermath },
    hooks.onGone,
  )
  const network = spec.network
  if (proxy !== undefined && network !== undefined)
    awaitListener(proxy.hostEnd, (fd) => terminal.serveNetwork(network, fd))
  // The next terminal of this plan gets a ruleset built while nothing starts.
  const prepare = spec.ruleset?.prepareNext
  if (prepare) void terminal.done.finally(() => setImmediate(prepare))
  hooks.afterFork?.(terminal)
  return terminal
}
