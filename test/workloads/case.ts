/**
 * The shape of a workload case (the corpus: test/workloads/corpus.ts): everyday developer commands in project dirs the test makes,
 * each run unconfined and through `cordon run --json`, with the verdict cordon must give checked
 * in here as data. test/workloads/workloads.test.ts runs every case; the placeholders below are
 * filled per run (each run gets fresh dirs of the same shape, so outputs compare after the run's
 * own dir is replaced by `<RUN>`).
 *
 *   {root}  the workspace root (the command's cwd unless `cwd` says otherwise)
 *   {out}   a sibling dir outside every writable root
 *   {home}  the run's HOME (outside the root; the case's git identity and npm config live there)
 *   {fix}   the shared fixtures: a packed npm package, a wheel, an sdist, a bare git repo…
 *   {py}    the system Python (/usr/bin/python3: the same interpreter for root and uid 65534)
 *   {port}  a free loopback port for a server the command starts itself
 *   {hostport}  the port of a loopback server the test host runs during the case
 *
 * An expectation states the RIGHT behaviour. A case cordon gets wrong today stays here as a
 * failing expectation (the lead fixes the cause); nothing here is bent to match a bug.
 */
import type { SandboxMode } from '../../src/policy/vocabulary.js'

/** What a confined run of a case must show. */
export type Expected =
  /** Same exit code as unconfined, same output where `compare` says, same effects, and no denial claimed. */
  | 'same'
  /**
   * A write the policy refuses: the unconfined run succeeds (the control), the confined one fails
   * and reports `denied` with `path` among its denied paths (`*` matches within one name); the
   * refused write did not happen; the denial line names the remedy: the flags `remedy` to add to
   * the case's own (never the mode in force), and rerunning with them added succeeds with the
   * unconfined run's effects.
   */
  | {
      denied: true
      path: string
      remedy: string
      /**
       * Through the CLI the command runs as `bash -c SCRIPT` inside the executor's own shell, so
       * a `cd` in SCRIPT moves a shell cordon does not see: claiming no denial (no path, no
       * remedy) is right there too. A wrong path never is; through the executor the path is due.
       */
      orNoClaimViaCli?: true
    }
  /**
   * A write the policy refuses that the command does not fail on: the unconfined run exits 0 (the
   * control), the confined one exits 0 too, claims no denial and names `path` among its
   * `refusedPaths`; the write did not happen; the line names the remedy `remedy`, and rerunning
   * with it refuses nothing and has the unconfined run's effects.
   */
  | { refused: true; path: string; remedy: string }
  /**
   * The confined run fails by design (what the backend refuses on purpose, said in `why`) and
   * cordon claims no write denial for it (its remedy would not help). `closed`: a class the
   * backend closes whole, which the run must report (`sandbox.closedClasses`, and a line naming
   * `remedy`); rerunning with `remedy`'s flags added succeeds with the unconfined run's effects.
   */
  | { fails: string; closed?: { class: string; remedy: string } }

/** Which output streams a `same` case compares (exit code and effects always). */
export type Compared = 'stdout' | 'stderr'

/** A tool a case needs on the host. */
export type Tool =
  | 'git'
  | 'npm'
  | 'gcc'
  | 'make'
  | 'curl'
  | 'rg'
  | 'python3-venv'
  | 'registry'
  | 'sqlite3'
  | 'tmux'
  | 'screen'
  | 'cmake'
  | 'perl'
  | 'ssh-keygen'

/** One workload. */
export interface WorkloadCase {
  /** Unique, kebab-case: the test's title. */
  name: string
  /** Why the expectation holds (one line). */
  about: string
  /** Bash run unconfined in {root}, as the run's uid, before the command (fresh dirs every run). */
  setup?: string
  /** The command: `cordon run -- bash -c COMMAND` (and `bash -c COMMAND` unconfined). */
  command: string
  mode: SandboxMode
  network?: 'inherit' | 'deny'
  /** Extra `cordon run` flags (besides --mode, --network, --root, --backend). */
  flags?: string[]
  /** The verdict on every backend (default 'same')... */
  expected?: Expected
  /** ...unless the backend that ran it (pinned or picked by the default chain) has its own. */
  on?: { landlock?: Expected; bubblewrap?: Expected }
  /** What a `same` case compares besides the exit code (default: stdout). */
  compare?: Compared[]
  /** Fed to stdin (a pipe), of the unconfined command and of `cordon run` alike (the executor gets it as `stdin`). */
  stdin?: string
  /** Added to the environment of each run (cordon's own, so its scrub sees them, and the control's). */
  env?: Record<string, string>
  /**
   * The confined run fails for want of a variable the scrub removed: its result names exactly
   * `names` (`sandbox.removedEnv`), and rerunning with the `remedy` flags gives the unconfined output.
   */
  removedEnv?: { names: string[]; remedy: string }
  /** Bash run unconfined in {root} after each run; its output must match the unconfined run's. */
  effects?: string
  /** How cordon runs it: `cordon run` (default) and/or the executor in-process (root only). */
  via?: ReadonlyArray<'cli' | 'executor'>
  /** A subdir of {root} to run in (the workspace root stays {root}). */
  cwd?: string
  /** Also run as uid 65534 (cordon itself started by setpriv); `only` runs it as 65534 alone. */
  nobody?: 'also' | 'only'
  /** Checks the long-output facts: stdout truncated, its spill file exists after cordon exits and holds it all. */
  spill?: true
  /** The test host serves HTTP on {hostport} (loopback) while the case runs. */
  hostServer?: true
  needs?: Tool[]
}
