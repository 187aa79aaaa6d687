/**
 * A confined terminal under bubblewrap: node-pty → bwrap (no `--new-session`: job control needs
 * the terminal's session; no `--json-status-fd`: no fd but the pty exists) → cordon-exec init as
 * pid 1 of the sandbox → the program.
 */
import type { SandboxCapabilities } from '../../policy/backends.js'
import { DEFAULT_NETWORK_POLICY } from '../../policy/defaults.js'
import { SandboxUnavailableError } from '../../policy/errors.js'
import type { SubprocessTerminalSpawnSpec } from '../../subprocess/types.js'
import type { ConfinementPlan } from '../confinement/plan.js'
import { bubblewrapArgv } from './argv.js'
import { sealsDevices } from './plan.js'
import { bwrapProblem } from './program.js'

/** The bwrap argv around `launcher` for a terminal; SANDBOX_UNAVAILABLE without a trusted bwrap or when the command must run as the owner. */
export function bubblewrapTerminalArgv(
  plan: ConfinementPlan,
  launcher: string[],
  spec: SubprocessTerminalSpawnSpec,
  capabilities: SandboxCapabilities,
): string[] {
  const cap = capabilities.backends.bubblewrap
  // The bwrap the probe checked, still that file and still trusted (program.ts), or nothing runs.
  const problem = cap ? bwrapProblem(cap) : 'the probe recorded no bwrap executable'
  if (problem !== undefined) throw new SandboxUnavailableError(plan.policy.mode, { reason: problem })
  const bwrap = cap?.executable as string
  // node-pty execs bwrap itself: nothing can start it as the workspace owner.
  if (plan.runAs !== undefined) {
    throw new SandboxUnavailableError(plan.policy.mode, {
      reason: `a bubblewrap terminal cannot run as the workspace owner (uid ${plan.runAs.uid})`,
      remedy: 'Use the landlock backend for this terminal, or run the command without a terminal.',
    })
  }
  return bubblewrapArgv(plan.grants, {
    bwrapPath: bwrap,
    network: plan.policy.network ?? DEFAULT_NETWORK_POLICY,
    tempDir: plan.tempDir,
    cwd: spec.cwd,
    command: launcher,
    terminal: true,
    mounts: plan.mounts,
    sealDevices: sealsDevices(plan),
  })
}
