/**
 * The subprocess seam's vocabulary (seed 003), kept name for name, plus cordon's extensions
 * (`confinement`, `supervise`). This seam applies no defaults: every disposition is explicit.
 */
import type { SubprocessBounds } from './cgroup/leaf.js'
import type { Readable, Writable } from 'node:stream'
import type { SandboxBackendName } from '../policy/backends.js'
import type { ConfinedSandboxMode } from '../policy/vocabulary.js'
import type { NetworkFacts } from '../policy/network/facts.js'

/** One environment key inside the managed `DSH_` namespace. */
export type DshEnvironmentKey = `DSH_${string}`

/** Trusted harness variables for one child-process execution. */
export type DshEnvironment = Readonly<Record<DshEnvironmentKey, string>>

/**
 * cordon: which parent variables a child starts from. `scrubbed`: the parent minus credentials, agent
 * sockets and `DSH_*`; `minimal`: only PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TZ, TERM, TMPDIR.
 */
export type SubprocessEnvironmentMode = 'scrubbed' | 'minimal'

/** One captured stream: the (possibly truncated) text plus recovery info. */
export interface CollectedOutput {
  /** Collected text — the TAIL of the stream when truncated. */
  text: string
  /** True when bytes were dropped from `text`. */
  truncated: boolean
  /** Path to a file holding the COMPLETE stream, when truncated and available. */
  spillPath?: string
}

/**
 * Bounded in-memory collection for one output stream, with an optional
 * full-stream spill file. Omitting `spill` keeps only the in-memory tail —
 * the diagnostic-tail shape (a language server's stderr); including it makes
 * the complete stream recoverable up to its cap (the bash tool shape).
 */
export interface SubprocessCollect {
  /** In-memory cap in bytes; overflow keeps the TAIL. */
  maxBytes: number
  /** Full-stream spill file; absent disables spilling entirely. */
  spill?: {
    /** Whole-stream byte cap; a larger stream discards its now-incomplete spill. */
    maxBytes: number
    /** Existing private directory for the file (a sandbox session's spill dir); default the runtime's own. */
    dir?: string
  }
}

/**
 * Cursor-free incremental access to one collected output stream. Offsets are
 * whole-stream byte coordinates owned by the caller, so independent readers
 * cannot consume one another's output; `readFrom(0)` after settlement is the
 * batch result (`lossy` then means the in-memory tail lost its head — the
 * {@link CollectedOutput.truncated} fact).
 */
export interface SubprocessOutputReader {
  /**
   * Read everything captured since `fromByte`. When that offset has slid out
   * of the in-memory tail window the read is `lossy` — it returns the whole
   * retained tail and the gap is only recoverable from the spill file.
   * @param fromByte - whole-stream offset to resume from (a prior read's `nextOffset`; 0 for the first read).
   * @returns the delta text, the next offset, the `lossy` flag, and the spill path when one exists.
   */
  readFrom(fromByte: number): SubprocessOutputRead
}

/** One incremental {@link SubprocessOutputReader.readFrom} read. */
export interface SubprocessOutputRead {
  /** Stream text from the requested offset (the whole retained tail when lossy). */
  text: string
  /** Whole-stream offset to resume from on the next read. */
  nextOffset: number
  /** True when the requested offset slid out of the in-memory tail window. */
  lossy: boolean
  /** Path to the full-stream spill file, when one was created and remains intact. */
  spillPath?: string
}

/**
 * stdin disposition. `'ignore'` leaves fd 0 on `/dev/null`; `'pipe'` exposes
 * {@link SubprocessHandle.stdin}; `{ data }` writes the bytes and closes (EPIPE ignored).
 */
export type SubprocessStdinMode = 'ignore' | 'pipe' | { readonly data: string }

/** stdout/stderr disposition: a raw pipe, the host's own fd, or bounded collection. */
export type SubprocessOutputMode = 'pipe' | 'inherit' | SubprocessCollect

/** Per-stream stdio dispositions, all explicit. */
export interface SubprocessStdio {
  stdin: SubprocessStdinMode
  stdout: SubprocessOutputMode
  stderr: SubprocessOutputMode
}

/**
 * A Landlock ruleset the sandbox floor built and owns, referenced by a confined spec. The spec
 * holds this object, never a bare fd number: a ruleset the sandbox has closed reads `closed`, and
 * a spawn of such a spec fails closed instead of running under whatever the number now names.
 */
export interface RulesetReference {
  readonly fd: number
  readonly closed: boolean
}

/**
 * A ruleset a terminal's launcher inherits: built anew for each spawn, so that a descriptor
 * another process of the host inherits in the same instant reaches no ruleset a later run uses.
 */
export interface HandedRuleset {
  /** Its sandbox was disposed: nothing may run with it. */
  readonly closed: boolean
  /** A new ruleset fd (close-on-exec) with the plan's rules; the caller owns and closes it. */
  fresh(): number
  /** Builds the next spawn's ruleset ahead, once this spawn's terminal is done (off every start's path). */
  prepareNext?(): void
}

/** The steps a confined command applies to itself before exec, in this order (`oomScoreAdj`: first). */
export interface ConfinementSteps {
  /** Resource limits (RLIMIT_CORE 0 and the policy's limits). */
  rlimits?: ReadonlyArray<{ resource: number; soft: number; hard: number }> | undefined
  /** Empty every capability set (and the bounding set and securebits when `dropBounding`). */
  dropCaps: boolean
  dropBounding: boolean
  capLast: number
  /** Become this uid and gid (no supplementary groups) before the capabilities go. */
  credentials?: { uid: number; gid: number } | undefined
  noNewPrivs: boolean
  ruleset?: RulesetReference | undefined
  landlockFlags?: number | undefined
  filter?: Buffer | undefined // the seccomp program, loaded last
  oomScoreAdj?: number | undefined
}

/**
 * What the sandbox floor hands the runtime: a finished plan. Under `landlock` the command runs
 * below a supervisor (cordon-exec, outside the sandbox) and applies `steps` to itself, in the
 * `namespaces` the supervisor enters first. Under `bubblewrap` the spec's argv is the `bwrap`
 * argv, which runs cordon-exec inside as the command's supervisor: it reports on fd 3, bwrap's
 * JSON status comes on fd 4 and `wrapper.ruleset` goes to fd 5; `steps` are bwrap's own.
 */
export interface SubprocessConfinement {
  /** The backend that built the plan (for facts and errors). */
  backend: SandboxBackendName
  /** The sandbox mode the plan enforces. */
  mode: ConfinedSandboxMode
  steps?: ConfinementSteps | undefined
  /**
   * `keys`: the launcher's private mount namespace where /proc/keys reads empty (root only).
   * `view`: a mount namespace of the run's own where every mount is read-only but these paths
   * (metadata outside them fails EROFS).
   */
  namespaces?:
    | { ipc?: boolean; net?: boolean; user?: boolean; keys?: boolean; view?: readonly string[] | undefined }
    | undefined
  wrapper?: { ruleset?: RulesetReference | undefined } | undefined
  /** Paths that must not exist once the tree is gone: each that does is moved aside (`SubprocessHandle.refusedPaths`). */
  mustNotAppear?: readonly string[] | undefined
  /**
   * Symlinks that must point where they did once the tree is gone (`.bin/cordon`): each that does
   * not is moved aside and made again (reported with `refusedPaths`).
   */
  mustStay?: ReadonlyArray<{ path: string; target: string }> | undefined
  /**
   * A resident bubblewrap instance the native launcher may run this spec in instead of its own
   * bwrap (the spec's argv stays that bwrap, for a spawn path without the launcher).
   */
  resident?: ResidentInstance | undefined
  /**
   * A network allow-list: the run's supervisor listens on 127.0.0.1:`proxyPort` inside the run's
   * own network namespace and hands the listener to the host, which gives it to `serve` (the
   * sandbox's proxy) for the run's lifetime.
   */
  network?: ProxiedNetwork | undefined
  /** Bounds of the whole tree (src/subprocess/cgroup/leaf.ts); under bubblewrap the init argv names the cgroup fds. */
  bounds?: SubprocessBounds | undefined
}

/** Where a run's proxy listener goes, and how its facts come back (src/sandbox/network/). */
export interface ProxiedNetwork {
  proxyPort: number
  /** Serves `listenerFd` (owned by the callee from now on) for this run. */
  serve(listenerFd: number): { finish(): NetworkFacts }
}

/** A resident bubblewrap instance and the run a request asks it for (src/sandbox/bubblewrap/resident.ts). */
export interface ResidentInstance {
  /** Names the instance: one per sandbox and plan. */
  key: string
  /** The bwrap argv that starts it, its launcher (`cordon-exec instance`) inside, on fd 3. */
  argv: readonly string[]
  /** bwrap's own steps (no_new_privs, its seccomp program, credentials). */
  wrapperSteps?: ConfinementSteps | undefined
  /** The command as the instance runs it: its absolute path (PATH searched already) and argv. */
  command: { path: string; argv: readonly string[] }
  /** The steps the request carries (the supervisor applied the rest to itself). */
  steps: ConfinementSteps
  /** The instance's runs each hand over a proxy listener on this port (a network allow-list). */
  proxyPort?: number | undefined
}

/** A fully-specified spawn request. argv is never shell-interpreted. */
export interface SubprocessSpawnSpec {
  /** Executable and arguments; `argv[0]` is the program. */
  argv: readonly string[]
  /** Working directory for the child. */
  cwd: string
  /** Per-stream stdio dispositions. */
  stdio: SubprocessStdio
  /** Positive finite grace (ms) for terminate escalation and for draining pipes after exit. */
  graceMs: number
  /** Abort signal: starts the terminate escalation on the process tree when it fires. */
  signal?: AbortSignal | undefined
  /** Explicit entries merged onto the scrubbed parent env; `undefined` deletes. */
  env?: NodeJS.ProcessEnv | undefined
  /** cordon: the parent base `env` is merged onto (default `scrubbed`). */
  environment?: SubprocessEnvironmentMode | undefined
  /** cordon: confinement the child applies to itself before exec (from `LocalSandbox.confine`). */
  confinement?: SubprocessConfinement | undefined
  /**
   * cordon: a background run. Every confined run has a supervisor (a subreaper outside the
   * sandbox) that ends the rest of the tree when the command exits; with `supervise` an
   * unconfined run gets one too, and the supervisor instead waits for the tree to empty (a
   * daemon the command started lives on until `terminate()`).
   */
  supervise?: boolean | undefined
  /** cordon: called with each chunk of a collected stream as it arrives (streaming callers). */
  onOutput?: ((chunk: Buffer, stream: 'stdout' | 'stderr') => void) | undefined
}

/** Offset-based readers for the streams spawned in collect mode. */
export interface SubprocessCollectedOutputs {
  readonly stdout?: SubprocessOutputReader
  readonly stderr?: SubprocessOutputReader
}

/** Exit facts of one closed process, in Node's `close`-event vocabulary. */
export interface SubprocessOutcome {
  /** Exit code; null when the process died from a signal. */
  exitCode: number | null
  /** Terminating signal (e.g. 'SIGTERM'); null on normal exit. */
  signal: NodeJS.Signals | null
}

/** A live child process rooted in its own process tree. */
export interface SubprocessHandle {
  /** Process id (tree root); -1 when the spawn itself failed. */
  readonly pid: number
  readonly stdin: Writable | undefined
  readonly stdout: Readable | undefined
  readonly stderr: Readable | undefined
  /** Offset-based readers for collect-mode streams (also readable after exit). */
  readonly collected: SubprocessCollectedOutputs
  /** cordon: the `confinement.mustNotAppear` paths the run created, moved aside once its tree was gone. */
  readonly refusedPaths?: readonly string[]
  /** cordon: what the network allow-list's proxy saw of the run, once its tree is gone. */
  readonly network?: NetworkFacts | undefined
  /** Resolves at process close with exit facts; rejects only for spawn-level failures. */
  readonly done: Promise<SubprocessOutcome>
  /** SIGTERM → graceMs → SIGKILL over the tree; idempotent; a no-op once the tree is gone. */
  terminate(): void
  /** Resolves true once the whole tree has exited, false when `signal` aborted first. */
  waitForExit(signal?: AbortSignal): Promise<boolean>
}

/**
 * A fully-specified terminal request (seed 003): the program, its directory, environment
 * overrides, the terminal's size, the cleanup grace and an allocation cancellation. Like
 * {@link SubprocessSpawnSpec} this seam applies no defaults, and `argv` is opaque: a confined
 * terminal is the same spec with a launcher in front of the program.
 */
export interface SubprocessTerminalSpawnSpec {
  /** Executable and arguments; `argv[0]` is the program, started as the session leader. Never shell-interpreted. */
  argv: readonly string[]
  /** Working directory for the program. */
  cwd: string
  /**
   * Explicit entries merged onto the scrubbed parent env exactly as {@link SubprocessSpawnSpec.env}
   * (a string sets, `undefined` deletes). `TERM` comes from the merged env, `dumb` when it has none.
   */
  env?: NodeJS.ProcessEnv | undefined
  /** Terminal width in columns (1..65535). */
  cols: number
  /** Terminal height in rows (1..65535). */
  rows: number
  /** Positive finite grace (ms) between each step of {@link SubprocessTerminalHandle.terminate}. */
  graceMs: number
  /**
   * Cancels the allocation only: an already-aborted signal throws at once, one that fires while
   * the provider loads its terminal backend rejects the allocation before anything is forked. Once
   * the handle is returned the session's lifetime belongs to `terminate()` and runtime disposal.
   */
  signal?: AbortSignal | undefined
  /**
   * cordon: `argv` starts a launcher (`cordon-exec` under `confineTerminal`) that stays the session
   * leader and starts the program below it (under a wrapper such as bwrap, through processes of the
   * leader's own group), in a process group of its own that it makes
   * the terminal's foreground. The program's group then counts as the session's own (see
   * {@link SubprocessTerminalForeground.programGroup}); without it the program is the leader.
   */
  launcher?: boolean | undefined
  /**
   * cordon: the Landlock ruleset the launcher inherits as a descriptor, set by `confineTerminal`
   * (its argv says `--ruleset-fd @ruleset`): each spawn builds a fresh one, the only ruleset
   * object its launcher ever sees, and lets node-pty's fork inherit it.
   */
  ruleset?: HandedRuleset | undefined
  /**
   * cordon: set by `confineTerminal`, as `confinement.mustNotAppear` and `mustStay` of a spawn:
   * once the session is gone, each path here the session created is moved aside and each link
   * put back ({@link SubprocessTerminalHandle.refusedPaths} names them).
   */
  aftermath?: TerminalAftermath | undefined
  /**
   * cordon: a network allow-list (set by `confineTerminal`, its argv says `--proxy-listener
   * PORT:@proxy`): the launcher hands its listener over a socket pair made for this spawn.
   */
  network?: ProxiedNetwork | undefined
}

/** cordon: what a confined terminal session must leave as it found it (see `confinement.mustNotAppear`). */
export interface TerminalAftermath {
  mustNotAppear?: readonly string[] | undefined
  mustStay?: ReadonlyArray<{ path: string; target: string }> | undefined
}

/** node-pty's disposable shape: what {@link SubprocessTerminalHandle.onData} returns. */
export interface SubprocessTerminalDisposable {
  /** Stops the listener; idempotent. */
  dispose(): void
}

/** How a foreground process was seen waiting for terminal input. */
export interface SubprocessTerminalInputWait {
  /** The waiting process (a member of the foreground group). */
  pid: number
  /** The blocking system call: read, readv, pread64, select, pselect6, poll, ppoll, epoll_wait, epoll_pwait, epoll_pwait2. */
  syscall: string
  /** The process's descriptors on this terminal that the call waits to read. */
  fds: readonly number[]
}

/** What {@link SubprocessTerminalHandle.inspectForeground} saw: the terminal's foreground job. */
export interface SubprocessTerminalForeground {
  /** The terminal's foreground process group (`tpgid`). */
  pgid: number
  /**
   * Whether that group is the program's own (a shell at its prompt, or the program itself) rather
   * than a job it started: the session leader's group, or under a launcher its first child's.
   */
  programGroup: boolean
  /** The process whose command is reported: the group leader, or its oldest live member when the leader is gone. */
  pid: number
  /** Its command name (`comm`, at most 15 bytes). */
  command: string
  /** Its argv from `/proc/<pid>/cmdline` (empty when unreadable). */
  argv: readonly string[]
  /** Whether a member of the foreground group is blocked reading this terminal. */
  waitingForInput: boolean
  /** The evidence, when `waitingForInput`. */
  inputWait?: SubprocessTerminalInputWait | undefined
}

/**
 * A live terminal session (seed 003): one program leading its own session on a pty the provider
 * allocated. Output is UTF-8 text in order; it ends after the output queued when the top process
 * exits, and no chunk splits a multi-byte character.
 */
export interface SubprocessTerminalHandle extends AsyncIterable<string> {
  /** Process id of the top process: the session leader, whose pid is also the session id. */
  readonly pid: number
  /** Resolves once the top process has exited and its output has ended; never rejects. */
  readonly done: Promise<SubprocessOutcome>
  /** cordon: the `aftermath` paths the session created or changed, moved aside once it was gone. */
  readonly refusedPaths?: readonly string[] | undefined
  /** cordon: what the network allow-list's proxy saw of the session, once it is gone. */
  readonly network?: NetworkFacts | undefined
  /** Calls `listener` with each chunk of output from now on (node-pty's shape); dispose() stops it. */
  onData(listener: (text: string) => void): SubprocessTerminalDisposable
  /** Types `data` into the terminal (keys, pastes, control bytes); false once the terminal has closed. */
  write(data: string | Uint8Array): boolean
  /** Resizes the terminal (the foreground job gets SIGWINCH); a no-op once it has closed. */
  resize(cols: number, rows: number): void
  /** The foreground job now; undefined when no process of the session is left to ask. */
  inspectForeground(): Promise<SubprocessTerminalForeground | undefined>
  /**
   * Sends `signal` to the foreground process group; refuses SIGKILL to the session leader's own
   * group and to the program's (that is `terminate()`'s job). Resolves false when no process of
   * the session is left.
   */
  signalForeground(signal: NodeJS.Signals): Promise<boolean>
  /**
   * TERM (and a hangup to the leader), `graceMs`, KILL, then a sweep of every session member the
   * provider can observe. Resolves only when the top process is reaped and no observable member is
   * alive; rejects with a `TERMINAL_CLEANUP_FAILED` error naming every survivor. Idempotent.
   */
  terminate(): Promise<void>
}
