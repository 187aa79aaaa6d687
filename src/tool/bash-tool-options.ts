/**
 * What createBashTool and createBashTools accept, checked with zod at the boundary: a missing or
 * wrong option is an InvalidRequestError naming the field, never a TypeError from inside a call.
 */
import path from 'node:path'
import type { z as Z } from 'zod'
import { zod } from '../policy/schema/zod-on-demand.js'
import { InvalidRequestError } from '../policy/errors.js'
import type { ResolvePolicyInput } from '../policy/resolve.js'
import { vocabularySchemas } from '../policy/schema/vocabulary.js'
import { type NetworkPolicy, SANDBOX_MODES, type SandboxMode } from '../policy/vocabulary.js'
import { isResolvedConfig, type ResolvedConfig } from '../policy/config/settings.js'
import { configPolicyInput } from '../policy/config/policy-input.js'
import type { RefusalLogQuery, RefusalLogRead } from '../sandbox/refusal-log/log.js'
import type { ShellEnvRegistry } from '../shell/env-registry.js'
import type { ShellExecutor } from '../shell/types.js'
import type { Approval } from './approval.js'
import { InMemoryJobs } from './jobs/in-memory.js'
import type { Jobs } from './jobs/port.js'
import { SandboxFailureMemory } from './sandbox-failure-memory.js'

const { z } = zod()

/** Options of createBashTool / createBashTools. */
export interface BashToolOptions {
  /** Runs the commands; the escalation fields are offered iff it confines (`sandboxMode` defined). */
  executor: ShellExecutor
  /** Asked before a strictly-wider retry; absent: a requested escalation fails without prompting. */
  approval?: Approval | undefined
  /** Workspace root of calls that bring no session cwd (absolute); default `process.cwd()`. */
  workspaceRoot?: string | undefined
  /** Owns background job ids and ownership; default: a fresh InMemoryJobs. */
  jobs?: Jobs | undefined
  /** Collects each call's `DSH_*` snapshot (seed 000's ctx.shellEnv); absent: the executor's own registry, if any. */
  shellEnv?: Pick<ShellEnvRegistry, 'collect'> | undefined
  /**
   * The network of every confined call: `inherit` (default), `deny`, or an allow-list of hosts. Under
   * `deny` or a list the model may ask, with `additional_hosts`, for more hosts for one call.
   */
  network?: NetworkPolicy | undefined
  /** The refusal log sandbox_refusals reads (a LocalSandbox); absent: the executor's, when it keeps one. */
  refusalLog?: RefusalLogSource | undefined
  /**
   * A resolved configuration (loadConfig, or a LocalSandbox's `config`): its mode is the default mode
   * of a confining executor's calls, its network the default `network`, and its writable roots,
   * hidden and protected paths and limits join every call's policy (relative paths: to the call's root).
   */
  config?: ResolvedConfig | undefined
}

/** Where sandbox_refusals reads the log: a LocalSandbox, or an executor over one. */
export interface RefusalLogSource {
  refusals(query?: RefusalLogQuery): RefusalLogRead | undefined
}

const method = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { error: 'must be a function' })

/** An object with the given methods (class instances included: methods are read through the prototype). */
function withMethods(names: readonly string[], what: string, extra: Z.ZodRawShape = {}) {
  return z.looseObject(Object.fromEntries([...names.map((n) => [n, method] as const), ...Object.entries(extra)]), {
    error: (issue) => (issue.input === undefined ? `required (${what})` : `must be ${what}`),
  })
}

const OptionsSchema = z.strictObject(
  {
    executor: withMethods(['resolve', 'run', 'start'], 'a ShellExecutor: resolve, run, start', {
      sandboxMode: z
        .enum(SANDBOX_MODES, { error: `must be undefined or one of ${SANDBOX_MODES.join(', ')}` })
        .optional(),
    }),
    approval: withMethods(['request'], 'an Approval: request').optional(),
    workspaceRoot: z
      .string({ error: 'must be an absolute path' })
      .refine((p) => path.isAbsolute(p), { error: (i) => `must be an absolute path, got ${JSON.stringify(i.input)}` })
      .optional(),
    jobs: withMethods(['start', 'output', 'kill', 'list'], 'a Jobs port: start, output, kill, list').optional(),
    shellEnv: withMethods(['collect'], 'a ShellEnvRegistry: collect').optional(),
    network: vocabularySchemas().NetworkPolicySchema.optional(),
    refusalLog: withMethods(['refusals'], 'a refusal log: refusals').optional(),
    config: z
      .custom<ResolvedConfig>(isResolvedConfig, {
        error: 'must be a resolved config (loadConfig, or LocalSandbox.config)',
      })
      .optional(),
  },
  {
    error:
      'expected an options object ({ executor, approval?, workspaceRoot?, jobs?, shellEnv?, network?, refusalLog?, config? })',
  },
)

/** Throws InvalidRequestError listing every missing, wrong or unknown option, each by name. */
export function checkBashToolOptions(options: unknown): asserts options is BashToolOptions {
  const parsed = OptionsSchema.safeParse(options)
  if (parsed.success) return
  const issues = parsed.error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `(root): unknown option ${JSON.stringify(k)}`)
    const where = issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.')
    return [`${where}: ${issue.message}`]
  })
  throw new InvalidRequestError(issues, { context: 'invalid bash tool options', cause: parsed.error })
}

/** What the tools of one set share: the checked options, filled, and the set's own state. */
export interface BashToolContext {
  executor: ShellExecutor
  approval: Approval | undefined
  /** Absolute; the root of calls without a session cwd. */
  workspaceRoot: string
  jobs: Jobs
  shellEnv: Pick<ShellEnvRegistry, 'collect'> | undefined
  /** The last sandbox failure per owner, for approvals. */
  failures: SandboxFailureMemory
  /** The network of every confined call (absent: inherit). */
  network: NetworkPolicy | undefined
  /** The default mode of a call (undefined: the executor does not confine): the config's, else the executor's. */
  defaultMode: SandboxMode | undefined
  /** The configuration whose paths and limits join every call's policy. */
  config: ResolvedConfig | undefined
  /** What sandbox_refusals reads (absent: the executor keeps no log). */
  refusalLog: RefusalLogSource | undefined
}

/** Checks `options` (see checkBashToolOptions) and fills the defaults of one tool set. */
export function bashToolContext(options: BashToolOptions): BashToolContext {
  checkBashToolOptions(options)
  return {
    executor: options.executor,
    approval: options.approval,
    workspaceRoot: options.workspaceRoot ?? process.cwd(),
    jobs: options.jobs ?? new InMemoryJobs(),
    shellEnv: options.shellEnv,
    failures: new SandboxFailureMemory(),
    network: options.network ?? options.config?.network,
    defaultMode:
      options.executor.sandboxMode === undefined ? undefined : (options.config?.mode ?? options.executor.sandboxMode),
    config: options.config,
    refusalLog: options.refusalLog ?? executorLog(options.executor),
  }
}

/** The executor's refusal log, when it keeps one (LocalShellExecutor over a sandbox). */
function executorLog(executor: ShellExecutor): RefusalLogSource | undefined {
  const reader = (executor as Partial<RefusalLogSource>).refusals
  return typeof reader === 'function' ? { refusals: (query) => reader.call(executor, query) } : undefined
}

/** The policy fields the tool set's configuration adds to a call under `root` (none without one). */
export function configFieldsFor(
  context: BashToolContext,
  root: string,
): Pick<ResolvePolicyInput, 'writableRoots' | 'hiddenPaths' | 'protectedPaths' | 'limits'> {
  if (context.config === undefined) return {}
  const { defaultMode: _mode, network: _network, ...fields } = configPolicyInput(context.config, root)
  return fields
}
