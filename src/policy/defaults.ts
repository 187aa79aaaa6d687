/**
 * Every default cordon applies when a caller does not say, in one place: the policy's (mode,
 * network), the executor's (timeouts, output bounds, grace), the sandbox's caches and the probe's
 * budget. Each is overridable where it is used; none is a limit of the mechanism itself.
 */
import type { NetworkMode, NetworkPolicy } from './vocabulary.js'

/** The fail-safe mode when nothing else is configured (defined with the modes; here for one lookup). */
export { DEFAULT_SANDBOX_MODE } from './vocabulary.js'

/** A policy that says nothing about the network keeps the host's. */
export const DEFAULT_NETWORK_POLICY: NetworkMode = 'inherit'

/** The network policy of `policy`: its own, else the default. */
export function networkOf(policy: { network?: NetworkPolicy | undefined }): NetworkPolicy {
  return policy.network ?? DEFAULT_NETWORK_POLICY
}

/** A foreground run's timeout when the request names none (ms). */
export const DEFAULT_TIMEOUT_MS = 120_000

/** The cap on any requested timeout (ms); the longest job_output may wait is the same ten minutes. */
export const MAX_TIMEOUT_MS = 600_000

/** The longest job_output may wait for a job to end (ms). */
export const MAX_JOB_WAIT_MS = MAX_TIMEOUT_MS

/** The in-memory tail kept per output stream (bytes). */
export const DEFAULT_MAX_OUTPUT_BYTES = 64_000

/** The spill file's cap per stream (bytes). */
export const DEFAULT_MAX_SPILL_BYTES = 64 * 1024 * 1024

/** TERM → KILL grace, and the pipe drain after exit (ms). */
export const DEFAULT_GRACE_MS = 3000

/** Landlock ruleset fds a sandbox keeps open. */
export const DEFAULT_RULESET_CACHE_SIZE = 16

/** Policies whose plans a sandbox remembers. */
export const PLAN_MEMO_SIZE = 64

/** A probe canary's time budget (ms). */
export const DEFAULT_CANARY_TIMEOUT_MS = 5000

/** The Seatbelt probe's budget per canary (ms). */
export const DEFAULT_SEATBELT_CANARY_TIMEOUT_MS = 3000

/**
 * The port a network allow-list's proxy listens on inside the run's own network namespace (no other
 * process shares that loopback, so one fixed port serves every run).
 */
export const PROXY_PORT = 3128

/** How often, at most, a streamed tool call shows a running command's output so far (ms). */
export const DEFAULT_PROGRESS_INTERVAL_MS = 200

/** How much of a running command's output a streamed tool call shows: its tail (characters). */
export const DEFAULT_PROGRESS_TAIL_CHARS = 8000

/**
 * The most processes and threads a confined run's tree may hold when the policy names no
 * `limits.processes` (a pids cgroup, where the host can make one): a fork bomb stops there.
 */
export const DEFAULT_PROCESS_LIMIT = 4096

/**
 * The share of the host's memory (the machine's, or the host's own cgroup limit when less) a
 * confined run's tree may use when the policy names no `limits.memoryBytes` (a memory cgroup).
 */
export const DEFAULT_MEMORY_FRACTION = 0.5

/**
 * The share of the host's memory a session's TMPDIR (a tmpfs, whose pages are memory) may hold when
 * the policy names no `limits.tempBytes`, where the host can mount one: a temp-space fill stops there.
 */
export const DEFAULT_TEMP_FRACTION = 0.25

/** Every confined run's oom_score_adj: under memory pressure the OOM killer takes a run before the host. */
export const CONFINED_OOM_SCORE_ADJ = 500
