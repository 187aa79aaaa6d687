/**
 * The policy fields of `cordon mcp`'s flags that neither the bash tool nor a configuration has a
 * word for (`--allow-socket`, `--host-caches`, `--shared-memory`, `--require-full`, `--unprotect`,
 * `--show`, `--no-default-*`), laid over the policy of every confined run. They are the same for
 * every call of the server, so they sit below the tool: the approval digest covers what the tool
 * decides (command, workdir, mode, hosts, and the configuration's paths and limits, which the
 * tool takes from `config`), and these come with whichever mode runs.
 */
import type { SandboxExecutionPolicy } from '../policy/vocabulary.js'
import type { ShellSandbox } from '../shell/executor.js'

/** The server-wide fields laid over each run's policy. */
export type PolicyOverlay = Pick<
  SandboxExecutionPolicy,
  | 'protectedDefaults'
  | 'unprotectedPaths'
  | 'hiddenDefaults'
  | 'allowUnixSockets'
  | 'cacheRoots'
  | 'sharedMemory'
  | 'requireEnforcement'
>

const OVERLAID = [
  'protectedDefaults',
  'unprotectedPaths',
  'hiddenDefaults',
  'allowUnixSockets',
  'cacheRoots',
  'sharedMemory',
  'requireEnforcement',
] as const satisfies readonly (keyof PolicyOverlay)[]

/** The overlay fields a resolved policy sets (those it leaves unset stay out). */
export function overlayOf(policy: SandboxExecutionPolicy): PolicyOverlay {
  return Object.fromEntries(OVERLAID.filter((k) => policy[k] !== undefined).map((k) => [k, policy[k]]))
}

/** `policy` with `overlay` laid over it. */
export function overlaid(policy: SandboxExecutionPolicy, overlay: PolicyOverlay): SandboxExecutionPolicy {
  return { ...policy, ...overlay }
}

/** `sandbox`, confining every run under its policy with `overlay` laid over it (its refusal log kept). */
export function overlaidSandbox(sandbox: ShellSandbox, overlay: PolicyOverlay): ShellSandbox {
  const over: ShellSandbox = { confine: (spec, policy) => sandbox.confine(spec, overlaid(policy, overlay)) }
  const { noteRun, refusals } = sandbox
  if (noteRun) over.noteRun = (run) => noteRun.call(sandbox, run)
  if (refusals) over.refusals = (query) => refusals.call(sandbox, query)
  return over
}
