/**
 * Remedies that converge, and refusals that leave a fact (issue 24, items 7, 9 and 10): every
 * remedy here is followed once by the harness and must then work. Recursive removals outside the
 * root (the parent of each top-most operand, not the dirs of the files rm could not unlink), a
 * protected path left writable by `--unprotect PATH`, a remedy that never names the mode already
 * in force, and each class a backend closes whole (shared memory and ptys under Landlock,
 * socket(AF_UNIX) under a cut network): unconfined as the control, confined on both backends,
 * the class and its flags reported, the flags followed once.
 */
import type { WorkloadCase } from '../case.js'

/** A repository with one commit (the case's git identity lives in {home}). */
const gitRepo = 'git init -q && git commit -q --allow-empty -m init'

export const REMEDIES: readonly WorkloadCase[] = [
  // --- recursive removals outside the root ---------------------------------------------------
  {
    name: 'rm-rf-nested-tree-outside',
    about:
      "rm -rf of a dir outside the root fails on a file two dirs down; the remedy is the parent of the operand (the file's dir would leave the dirs themselves to rm)",
    setup: 'mkdir -p {out}/code/sub && echo a > {out}/code/sub/a',
    command: 'rm -rf {out}/code',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/code/sub/a', remedy: '--writable {out}' },
    effects: 'ls -A {out}',
  },
  {
    name: 'rm-rf-two-trees-outside',
    about:
      'rm -rf of two dirs outside the root (as `rm -rf ~/code ~/.config`): one root, their parent, allows both; one per dir would leave rm unable to remove them',
    setup: 'mkdir -p {out}/code {out}/.config',
    command: 'rm -rf {out}/code {out}/.config',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/*', remedy: '--writable {out}' },
    effects: 'ls -A {out}',
  },
  {
    name: 'rm-rf-dirs-in-home',
    about:
      "the issue's own `rm -rf ~/code ~/.config`: their parent is the home dir, which no writable root may be, so the line says so and names the mode that allows it",
    setup: 'mkdir -p {home}/code {home}/.config',
    command: 'rm -rf ~/code ~/.config',
    mode: 'workspace-write',
    expected: { denied: true, path: '{home}/*', remedy: '--mode danger-full-access' },
    effects: 'ls -A {home}',
  },
  {
    name: 'rm-rf-tree-read-only',
    about: 'the same under read-only: the mode and the parent, in one step',
    setup: 'mkdir -p {out}/cache/sub && echo a > {out}/cache/sub/a',
    command: 'cd {out} && rm -rf cache',
    mode: 'read-only',
    expected: { denied: true, path: '{out}/cache/sub/a', remedy: '--mode workspace-write --writable {out}' },
    effects: 'ls -A {out}',
  },
  {
    name: 'git-clean-outside',
    about:
      'git clean in a checkout outside the root: the work tree itself is the root it needs (the untracked dirs go too), not the dir of each file',
    setup: `mkdir {out}/repo && cd {out}/repo && ${gitRepo} && mkdir -p build/sub && echo x > build/sub/x.o`,
    command: 'git -C {out}/repo clean -fdq',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/repo/build/sub/x.o', remedy: '--writable {out}/repo' },
    effects: 'ls -A {out}/repo',
    needs: ['git'],
  },
  {
    name: 'rm-rf-checkout-outside',
    about:
      "removing a checkout's .git outside the root: once the checkout is a writable root its .git is protected (hooks, config), so the same step leaves the removed tree unprotected",
    // A minimal git dir (HEAD and config): what rm names is then one dir's files.
    setup:
      "mkdir -p {out}/clone/.git && echo 'ref: refs/heads/main' > {out}/clone/.git/HEAD && touch {out}/clone/.git/config {out}/clone/a.txt",
    command: 'rm -rf {out}/clone/.git',
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{out}/clone/.git/*',
      remedy: '--writable {out}/clone --unprotect {out}/clone/.git',
    },
    effects: 'ls -A {out}/clone',
  },

  // --- a protected path: --unprotect PATH, not every default ----------------------------------
  {
    name: 'envrc-rewrite-unprotect',
    about:
      'rewriting .envrc (direnv runs it unasked) is refused under bubblewrap; the remedy leaves that one path writable, never the mode already in force',
    setup: "echo 'export A=1' > .envrc",
    command: "echo 'export A=2' > .envrc",
    mode: 'workspace-write',
    expected: { denied: true, path: '{root}/.envrc', remedy: '--unprotect .envrc' },
    // Landlock cannot make a subpath of a writable root read-only: stated by its account (partial).
    on: { landlock: 'same' },
    effects: 'cat .envrc',
  },
  {
    name: 'git-config-read-only-unprotect',
    about:
      'git config under read-only: workspace-write alone would still refuse .git/config (protected), so the remedy names both in one step',
    setup: gitRepo,
    command: 'git config core.autocrlf input',
    mode: 'read-only',
    expected: { denied: true, path: '{root}/.git/config', remedy: '--mode workspace-write --unprotect .git/config' },
    effects: 'git config --get core.autocrlf',
    needs: ['git'],
  },
  {
    name: 'write-outside-mode-in-force',
    about: 'under workspace-write a write outside the root names the root to add, never --mode workspace-write again',
    setup: 'mkdir {out}/logs',
    command: 'echo done > {out}/logs/run.log',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/logs/run.log', remedy: '--writable {out}/logs' },
    effects: 'cat {out}/logs/run.log 2>&1',
  },

  // --- classes a backend closes whole: said, with the flags that open them -------------------
  {
    name: 'python-multiprocessing-lock',
    about:
      "multiprocessing's SemLock needs sem_open in /dev/shm: Landlock closes it (the run says so, with --backend bubblewrap), bubblewrap gives each run its own",
    command: `{py} -c 'import multiprocessing as m; l = m.Lock(); l.acquire(); l.release(); print("locked")'`,
    mode: 'read-only',
    on: {
      landlock: {
        fails: '/dev/shm is closed under Landlock',
        closed: { class: 'shared-memory', remedy: '--backend bubblewrap' },
      },
    },
  },
  {
    name: 'script-pseudo-terminal',
    about:
      'util-linux script opens a pty: Landlock closes /dev/ptmx (said, with its way out), bubblewrap gives a /dev/pts',
    command: "set -o pipefail; script -qec 'echo in-a-pty' /dev/null | tr -d '\\r'",
    mode: 'read-only',
    on: {
      landlock: {
        fails: 'new ptys cannot be opened under Landlock',
        closed: { class: 'terminals', remedy: '--backend bubblewrap' },
      },
    },
  },
  {
    name: 'python-pty-spawn',
    about: "Python's pty.spawn: 'out of pty devices' under Landlock is the closed class, not the command's fault",
    command: `{py} -c 'import pty, sys; sys.exit(pty.spawn(["true"]))'`,
    mode: 'read-only',
    on: {
      landlock: {
        fails: 'new ptys cannot be opened under Landlock',
        closed: { class: 'terminals', remedy: '--backend bubblewrap' },
      },
    },
  },
  {
    name: 'unix-socket-in-root-network-deny',
    about:
      'a unix socket made and reached inside the root under network: deny: socket(AF_UNIX) is refused on both backends (a socket path cannot be told from a host service), said with --network inherit',
    command: `{py} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("app.sock"); s.listen(1); c = socket.socket(socket.AF_UNIX); c.connect("app.sock"); print("connected")'`,
    mode: 'workspace-write',
    network: 'deny',
    expected: {
      fails: 'the cut network refuses socket(AF_UNIX)',
      closed: { class: 'unix-sockets', remedy: '--network inherit' },
    },
    effects: 'test -S app.sock && echo socket',
  },
]
