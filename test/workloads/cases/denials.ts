/**
 * Issue 24's denials that were missed: refusals whose message is not `PATH: <errno text>` (git's
 * refused push, CMake's next-line path, sqlite's read-only database, dash's redirection), writes
 * the command does not fail on (perl -pi, git submodule add under bubblewrap), writes at hidden
 * places (npm config set, ssh-keygen), and a path named after a `cd` in a nested shell. Each runs
 * unconfined as its control, then confined on every backend, and its remedy is followed once.
 */
import type { WorkloadCase } from '../case.js'

const gitRepo = `git init -q -b main && printf 'hello\\n' > README.md && git add README.md && git commit -q -m first`
const cmakeProject = `printf 'cmake_minimum_required(VERSION 3.10)\\nproject(p NONE)\\n' > CMakeLists.txt`
const libRepo =
  'git init -q --bare -b main {out}/lib.git && git clone -q {out}/lib.git {out}/libw 2>/dev/null && ' +
  "printf 'lib\\n' > {out}/libw/l && git -C {out}/libw add l && git -C {out}/libw commit -q -m lib && " +
  'git -C {out}/libw push -q origin HEAD:main'

/** The denials round. */
export const DENIALS: readonly WorkloadCase[] = [
  {
    name: 'git-push-to-a-local-remote-outside-the-root',
    about: "receive-pack cannot make its quarantine in the remote's objects: the `To` line names the repository",
    setup: `git init -q --bare -b main {out}/remote.git && ${gitRepo}`,
    command: 'git push -q {out}/remote.git main',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/remote.git', remedy: '--writable {out}/remote.git' },
    effects: 'git --git-dir={out}/remote.git log --format=%s main',
    needs: ['git'],
  },
  {
    name: 'cmake-configure-in-read-only',
    about: 'CMake prints the refused directory on the line after its error, with no errno text',
    setup: cmakeProject,
    command: 'cmake -S . -B build >/dev/null',
    mode: 'read-only',
    expected: { denied: true, path: '{root}/build/CMakeFiles/pkgRedirects', remedy: '--mode workspace-write' },
    effects: 'test -f build/CMakeCache.txt && echo configured',
    needs: ['cmake'],
  },
  {
    name: 'sqlite-query-of-a-wal-database-in-read-only',
    about: 'a WAL database needs its -shm even to read: sqlite says "readonly database" or "unable to open", no path',
    setup: `sqlite3 db.sqlite 'pragma journal_mode=wal; create table t(a); insert into t values(1);' >/dev/null`,
    command: "sqlite3 db.sqlite 'select count(*) from t'",
    mode: 'read-only',
    expected: { denied: true, path: '{root}/db.sqlite', remedy: '--mode workspace-write' },
    effects: "sqlite3 db.sqlite 'select count(*) from t'",
    needs: ['sqlite3'],
  },
  {
    name: 'make-recipe-redirect-in-read-only',
    about: "dash's `cannot create out.txt: …` names a bare file after its phrase",
    setup: `printf 'all:\\n\\techo hi > out.txt\\n' > Makefile`,
    command: 'make -s',
    mode: 'read-only',
    expected: { denied: true, path: '{root}/out.txt', remedy: '--mode workspace-write' },
    effects: 'cat out.txt',
    needs: ['make'],
  },
  {
    name: 'sh-c-cd-then-a-relative-write-outside',
    about:
      "the path is relative to the dir a nested sh's cd moved to; the executor's shell logs only the outer command",
    setup: 'mkdir -p a',
    command: "sh -c 'cd a && echo x > ../../out/f'",
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/f', remedy: '--writable {out}' },
    effects: 'cat {out}/f',
    via: ['cli', 'executor'],
  },
  {
    name: 'bash-c-dash-c-cd-nested-quotes',
    about: 'a cd inside a shell inside a shell, in nested quotes, still places the relative path',
    setup: 'mkdir -p a/b',
    command: `bash -c "dash -c 'cd a; cd b && echo x > ../../../out/g'"`,
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/g', remedy: '--writable {out}' },
    effects: 'cat {out}/g',
  },
  {
    name: 'perl-in-place-edit-in-read-only-exits-0',
    about: 'perl -pi warns "Cannot make temp name" and exits 0: the edit is lost, and cordon says so',
    setup: 'printf "abc\\n" > f.txt',
    command: "perl -pi -e 's/a/b/' f.txt",
    mode: 'read-only',
    expected: { refused: true, path: '{root}/f.txt', remedy: '--mode workspace-write' },
    effects: 'cat f.txt',
    needs: ['perl'],
  },
  {
    name: 'git-submodule-add-protected-config',
    about:
      'bubblewrap binds .git/config read-only: git prints "could not write config file" twice and exits 0 with the submodule unregistered',
    setup: `${gitRepo} && ${libRepo}`,
    command: 'git -c protocol.file.allow=always submodule add -q {out}/lib.git lib',
    mode: 'workspace-write',
    expected: { refused: true, path: '{root}/.git/config', remedy: '--unprotect .git/config' },
    // Landlock cannot make a subpath of a root read-only (its `protected` is partial): git writes it.
    on: { landlock: 'same' },
    effects: "git config --get-regexp '^submodule' | sort",
    needs: ['git'],
  },
  {
    name: 'npm-config-set-hidden-npmrc',
    about:
      '~/.npmrc is hidden (registry tokens); writing it is a write denial, and only the full-access mode reaches $HOME',
    setup: 'printf "fund=true\\n" > {home}/.npmrc',
    command: 'npm config set fund false',
    mode: 'workspace-write',
    expected: { denied: true, path: '{home}/.npmrc', remedy: '--mode danger-full-access' },
    effects: 'cat {home}/.npmrc',
    needs: ['npm'],
  },
  {
    name: 'ssh-keygen-into-the-hidden-ssh-dir',
    about:
      'ssh-keygen names ~/.ssh/k in its own words ("Saving key … failed"); the remedy shows the entry and writes the dir',
    setup: 'mkdir -p {home}/.ssh',
    command: "ssh-keygen -q -t ed25519 -N '' -C wl -f {home}/.ssh/wl_key",
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{home}/.ssh/wl_key',
      remedy: '--show ssh-keys --writable {home}/.ssh',
    },
    effects: 'ls {home}/.ssh',
    needs: ['ssh-keygen'],
  },
]
