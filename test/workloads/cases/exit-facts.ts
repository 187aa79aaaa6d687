/**
 * Exit facts (issue 24, item 10): a command killed by a signal is that signal confined as
 * unconfined (bash execs the last command of `bash -c`; the confined shell must not fork it), and
 * an exit code that looks like a signal's stays a code. The harness compares exit code and signal
 * with the unconfined control, and stderr too where bash execs: no "User defined signal" line of a forking shell.
 */
import type { WorkloadCase } from '../case.js'

/** The exit-facts round. */
export const EXIT_FACTS: readonly WorkloadCase[] = [
  {
    name: 'signal-after-cd',
    about: 'the last command, after a cd, kills itself with USR1: SIGUSR1, not exit 138, and no line about it',
    setup: 'mkdir -p src',
    command: `cd src && sh -c 'kill -USR1 $$'`,
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    via: ['cli', 'executor'],
    nobody: 'also',
  },
  {
    name: 'signal-term-python',
    about: 'a program that ends itself with SIGTERM is SIGTERM (read-only, through the executor as well)',
    command: `echo started; {py} -c "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"`,
    mode: 'read-only',
    compare: ['stdout', 'stderr'],
    via: ['cli', 'executor'],
  },
  {
    name: 'signal-segv-crash',
    about: 'a crash (SIGSEGV) is the signal, not exit 139 with a "Segmentation fault" line',
    command: `ulimit -c 0; sh -c 'kill -SEGV $$'`,
    mode: 'read-only',
    compare: ['stdout', 'stderr'],
    nobody: 'also',
  },
  {
    name: 'signal-kill-own-shell',
    about: 'the shell itself killed (SIGKILL) after some output: SIGKILL, the output kept',
    command: 'echo before; kill -KILL $$',
    mode: 'workspace-write',
    via: ['cli', 'executor'],
  },
  {
    name: 'exit-138-stays-code',
    about: 'a program that exits 138 on purpose is exit code 138, never SIGUSR1',
    command: `cd . && sh -c 'exit 138'`,
    mode: 'read-only',
    via: ['cli', 'executor'],
    nobody: 'also',
  },
  {
    name: 'killed-child-waited-is-code',
    about: 'a child killed with SIGKILL and waited for: the shell exits 137, a code unconfined too',
    command: 'sleep 9 & kill -9 $!; wait $!',
    mode: 'workspace-write',
    via: ['cli', 'executor'],
  },
  {
    name: 'signal-in-group-is-code',
    about: 'a killed command bash does not exec (inside a group) is 138 from the shell, unconfined too',
    command: `{ sh -c 'kill -USR1 $$'; }`,
    mode: 'read-only',
    via: ['cli', 'executor'],
  },
]
