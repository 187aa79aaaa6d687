/**
 * The policy flags `run` and `explain` share, parsed with node:util parseArgs, and their
 * translation into a resolved policy.
 */
import { resolve as resolvePath } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { DEFAULT_NETWORK_POLICY, DEFAULT_SANDBOX_MODE } from '../policy/defaults.js'
import { type ResolvePolicyInput, resolvePolicy } from '../policy/resolve.js'
import { isSandboxMode, type SandboxExecutionPolicy, type SandboxMode } from '../policy/vocabulary.js'
import { ALL_SANDBOX_BACKENDS as SANDBOX_BACKENDS } from '../policy/backends.js'
import type { SandboxBackendName } from '../sandbox/probe.js'
import type { SubprocessEnvironmentMode } from '../subprocess/types.js'
import { UsageError } from './usage-error.js'

/** The parseArgs options of the policy flags. */
export const POLICY_OPTIONS = {
  mode: { type: 'string', short: 'm' },
  root: { type: 'string' },
  writable: { type: 'string', multiple: true },
  network: { type: 'string' },
  backend: { type: 'string' },
  'require-full': { type: 'boolean' },
  environment: { type: 'string' },
  hide: { type: 'string', multiple: true },
  show: { type: 'string', multiple: true },
  'no-default-hidden': { type: 'boolean' },
  protect: { type: 'string', multiple: true },
  unprotect: { type: 'string', multiple: true },
  'no-default-protected': { type: 'boolean' },
  'allow-socket': { type: 'string', multiple: true },
  'host-caches': { type: 'boolean' },
  'shared-memory': { type: 'boolean' },
  reprobe: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

/** The policy flags' help lines. */
export const POLICY_HELP = `  -m, --mode MODE        read-only (default) | workspace-write | danger-full-access
      --root DIR         workspace root (default: the current directory)
      --writable DIR     an extra writable root under workspace-write (repeatable)
      --network POLICY   inherit (default) | deny
      --backend NAME     pin the sandbox backend (${SANDBOX_BACKENDS.join(', ')})
      --require-full     refuse a backend that enforces the mode only partially
      --environment ENV  scrubbed (default: no credentials) | minimal (PATH, HOME, LANG… only)
      --hide PATH        hide a path from the command, besides the default set (repeatable)
      --show NAME        do not hide the default entry NAME (repeatable; see cordon explain)
      --no-default-hidden  hide only what --hide names
      --protect PATH     keep PATH read-only inside a writable root (relative: to the root)
      --unprotect PATH   leave a default protected path writable (relative: to the root; repeatable)
      --no-default-protected  do not protect git's hooks and config, editor and shell files, cordon
      --allow-socket PATH  keep a host unix socket reachable under bubblewrap (repeatable)
      --host-caches      let workspace-write use the host's package caches (default: cordon's own)
      --shared-memory    the command needs /dev/shm (prefers bubblewrap, which gives a private one)
      --reprobe          probe the backends again instead of using the cached verdict
      --json             machine-readable output on stdout`

/** Parsed policy flags. */
export interface PolicyFlags {
  policy: SandboxExecutionPolicy
  backends: SandboxBackendName[] | undefined
  json: boolean
  environment: SubprocessEnvironmentMode
  /** The probe verdict: cached on disk (`use`), or probed again and cached (`refresh`). */
  probeCache: 'use' | 'refresh'
}

/** Parses `args` with `extra` options; unknown options and bad values throw UsageError. */
export function parseWith(
  args: string[],
  extra: NonNullable<ParseArgsConfig['options']>,
): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({ args, options: { ...POLICY_OPTIONS, ...extra }, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(
      error instanceof Error ? error.message.replace(/\. To specify a positional.*$/s, '') : String(error),
    )
  }
}

/** Turns parsed flag values into a resolved policy; bad values throw UsageError naming the flag. */
export function policyFrom(values: Record<string, unknown>, cwd = process.cwd()): PolicyFlags {
  const mode = (values.mode as string | undefined) ?? DEFAULT_SANDBOX_MODE
  if (!isSandboxMode(mode))
    throw new UsageError(`--mode: unknown mode "${mode}" (read-only, workspace-write, danger-full-access)`)
  const network = (values.network as string | undefined) ?? DEFAULT_NETWORK_POLICY
  if (network !== 'inherit' && network !== 'deny')
    throw new UsageError(`--network: must be inherit or deny, got "${network}"`)
  const backend = values.backend as string | undefined
  if (backend !== undefined && !(SANDBOX_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`--backend: unknown backend "${backend}" (${SANDBOX_BACKENDS.join(', ')})`)
  }
  const writable = ((values.writable as string[] | undefined) ?? []).map((p) => resolvePath(cwd, p))
  const environment = (values.environment as string | undefined) ?? 'scrubbed'
  if (environment !== 'scrubbed' && environment !== 'minimal')
    throw new UsageError(`--environment: must be scrubbed or minimal, got "${environment}"`)
  const hide = ((values.hide as string[] | undefined) ?? []).map((p) => resolvePath(cwd, p))
  const show = (values.show as string[] | undefined) ?? []
  const sockets = ((values['allow-socket'] as string[] | undefined) ?? []).map((p) => resolvePath(cwd, p))
  if (writable.length > 0 && mode !== 'workspace-write')
    throw new UsageError('--writable: only meaningful with --mode workspace-write')
  let policy: SandboxExecutionPolicy
  try {
    policy = resolvePolicy({
      cwd,
      workspaceRoot: values.root === undefined ? undefined : resolvePath(cwd, values.root as string),
      defaultMode: mode as SandboxMode,
      writableRoots: writable,
      network,
      ...(values['require-full'] ? { requireEnforcement: 'full' as const } : {}),
      ...(hide.length > 0 ? { hiddenPaths: hide } : {}),
      ...(values['no-default-hidden']
        ? { hiddenDefaults: false }
        : show.length > 0
          ? { hiddenDefaults: { except: show } }
          : {}),
      ...protectionFrom(values),
      ...(sockets.length > 0 ? { allowUnixSockets: sockets } : {}),
      ...(values['host-caches'] ? { cacheRoots: 'host' as const } : {}),
      ...(values['shared-memory'] ? { sharedMemory: true } : {}),
    })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  return {
    policy,
    backends: backend === undefined ? undefined : [backend as SandboxBackendName],
    json: values.json === true,
    environment,
    probeCache: values.reprobe === true ? 'refresh' : 'use',
  }
}

/** `--protect`, `--unprotect` and `--no-default-protected` as policy fields (paths as given: relative ones are to the root). */
function protectionFrom(
  values: Record<string, unknown>,
): Pick<ResolvePolicyInput, 'protectedPaths' | 'unprotectedPaths' | 'protectedDefaults'> {
  const protect = (values.protect as string[] | undefined) ?? []
  const unprotect = (values.unprotect as string[] | undefined) ?? []
  return {
    ...(protect.length > 0 ? { protectedPaths: protect } : {}),
    ...(unprotect.length > 0 ? { unprotectedPaths: unprotect } : {}),
    ...(values['no-default-protected'] ? { protectedDefaults: false } : {}),
  }
}
