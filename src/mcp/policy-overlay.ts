/**
 * The policy fields of `cordon mcp`'s flags that the bash tool has no word for (`--hide`,
 * `--protect`, `--writable`, `--allow-socket`, `--host-caches`, `--shared-memory`,
 * `--require-full`), laid over the policy of every confined run. They are the same for every call
 * of the server, so they sit below the tool: the approval digest covers what the tool decides
 * (command, workdir, mode, hosts), and these come with whichever mode runs.
 */
import type { SandboxExecutionPolicy } from '../policy/vocabulary.js'
import type { ShellSandbox } from '../shell/executor.js'

/** The server-wide fields laid over each run's policy. */
export type PolicyOverlay = Pick<
  SandboxExecutionPolicy,
  | 'writableRoots'
  | 'protectedPaths'
  | 'protectedDefaults'
  | 'unprotectedPaths'
  | 'hiddenPaths'
  | 'hiddenDefaults'
  | 'allowUnixSockets'
  | 'cacheRoots'
  | 'sharedMemory'
  | 'requireEnforcement'
>

const OVERLAID = [
  'writableRoots',
  'protectedPaths',
  'protectedDefaults',
  'unprotectedPaths',
  'hiddenPaths',
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

/** `policy` with `overlay` laid over it; extra writable roots only under workspace-write, as the CLI allows them. */
export function overlaid(policy: SandboxExecutionPolicy, overlay: PolicyOverlay): SandboxExecutionPolicy {
  const { writableRoots, ...rest } = overlay
  return {
    ...policy,
    ...rest,
    ...(writableRoots !== undefined && policy.mode === 'workspace-write' ? { writableRoots } : {}),
  }
}

/** `sandbox`, confining every run under its policy with `overlay` laid over it (its refusal log kept). */
export function overlaidSandbox(sandbox: ShellSandbox, overlay: PolicyOverlay): ShellSandbox {
  const over: ShellSandbox = { confine: (spec, policy) => sandbox.confine(spec, overlaid(policy, overlay)) }
  const { noteRun, refusals } = sandbox
  if (noteRun) over.noteRun = (run) => noteRun.call(sandbox, run)
  if (refusals) over.refusals = (query) => refusals.call(sandbox, query)
  return over
}
