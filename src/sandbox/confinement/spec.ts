/**
 * What every confined spec starts from (sandbox/landlock/spec.ts, sandbox/bubblewrap/spec.ts): the caller's spec
 * without any confinement it may carry, with the plan's environment, the session's TMPDIR, and
 * collected streams spilling into the session's spill dir.
 */
import type { SubprocessOutputMode, SubprocessSpawnSpec } from '../../subprocess/types.js'
import { PROXY_PORT } from '../../policy/defaults.js'
import { proxyEnvironment } from '../../policy/network/proxy-env.js'
import { allowListOf } from '../../policy/vocabulary.js'
import type { ConfinementPlan } from './plan.js'

/** A collected stream's spill goes to the session's spill dir (its commands may read it), unless it names one. */
function spillInto(mode: SubprocessOutputMode, dir: string): SubprocessOutputMode {
  if (typeof mode !== 'object' || mode.spill === undefined || mode.spill.dir !== undefined) return mode
  return { ...mode, spill: { ...mode.spill, dir } }
}

/** The spec without any confinement it may already carry, with the plan's TMPDIR and the session's spill dir. */
export function bareSpec(spec: SubprocessSpawnSpec, plan: ConfinementPlan): SubprocessSpawnSpec {
  const { confinement: _ignored, ...rest } = spec
  const env = { ...plan.env, ...rest.env }
  if (plan.tempDir !== undefined) env.TMPDIR = plan.tempDir
  // Under an allow-list the proxy is the only way out: its variables win over the caller's.
  if (allowListOf(plan.policy.network)) Object.assign(env, proxyEnvironment(PROXY_PORT))
  const out = { ...rest, env }
  const spill = plan.grants.readable[0]?.path
  const stdio = out.stdio
  if (spill === undefined || stdio === undefined) return out
  const stdout = spillInto(stdio.stdout, spill)
  const stderr = spillInto(stdio.stderr, spill)
  if (stdout === stdio.stdout && stderr === stdio.stderr) return out
  return { ...out, stdio: { ...stdio, stdout, stderr } }
}
