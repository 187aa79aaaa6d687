/**
 * A resolved configuration as resolvePolicy's input for one workspace root: what a caller spreads
 * into `resolvePolicy({ cwd, ...configPolicyInput(config, root) })`. Relative paths are made
 * absolute against that root; a setting the configuration leaves empty is left out, so a policy
 * without any configuration is the same object it always was.
 */
import type { ResolvePolicyInput } from '../resolve.js'
import { absoluteIn } from './narrowing.js'
import type { ResolvedConfig } from './settings.js'

/** The policy fields a configuration decides. */
export type ConfigPolicyInput = Pick<
  ResolvePolicyInput,
  'defaultMode' | 'writableRoots' | 'network' | 'hiddenPaths' | 'protectedPaths' | 'limits'
>

/** `config` as resolvePolicy's fields, relative paths against `workspaceRoot` (default: the root it was loaded for). */
export function configPolicyInput(
  config: ResolvedConfig,
  workspaceRoot: string | undefined = config.workspaceRoot,
): ConfigPolicyInput {
  const abs = (paths: readonly string[]) => paths.map((p) => absoluteIn(workspaceRoot, p))
  return {
    defaultMode: config.mode,
    network: config.network,
    ...(config.writableRoots.length > 0 ? { writableRoots: abs(config.writableRoots) } : {}),
    ...(config.hiddenPaths.length > 0 ? { hiddenPaths: abs(config.hiddenPaths) } : {}),
    ...(config.protectedPaths.length > 0 ? { protectedPaths: config.protectedPaths } : {}),
    ...(Object.keys(config.limits).length > 0 ? { limits: config.limits } : {}),
  }
}
