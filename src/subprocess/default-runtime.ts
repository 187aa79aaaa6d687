/**
 * The host's shared subprocess runtime: the one every LocalShellExecutor without an injected
 * runtime spawns on. It belongs to the host, not to an executor, so disposing (reloading) an
 * executor leaves its background jobs running, as seed 000 and the reference say; the
 * composition's disposal is the runtime's. It is disposed with the host (a synchronous exit
 * hook kills every tree and removes its spill files), or earlier by
 * `disposeDefaultSubprocessRuntime()`.
 */
import { LocalSubprocessRuntime } from './runtime.js'

let shared: LocalSubprocessRuntime | undefined
let exitHookInstalled = false

/** The host's shared runtime, created on first use (and again after it was disposed). */
export function defaultSubprocessRuntime(): LocalSubprocessRuntime {
  if (shared === undefined) {
    shared = new LocalSubprocessRuntime()
    if (!exitHookInstalled) {
      exitHookInstalled = true
      // 'exit' listeners must be synchronous: SIGKILL what is left, remove the spill files.
      process.on('exit', () => shared?.disposeNow())
    }
  }
  return shared
}

/** Terminates every tree of the shared runtime (TERM, grace, KILL), waits for each, removes its spills. */
export async function disposeDefaultSubprocessRuntime(): Promise<void> {
  const runtime = shared
  shared = undefined
  await runtime?.dispose()
}
